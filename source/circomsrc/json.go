package circomsrc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/source/boundedread"
)

// ─── snarkjs JSON ────────────────────────────────────────────────────────────
//
// Points are decimal strings, affine with a third coordinate "1" (G1) or
// ["1","0"] (G2); G2 coordinates are [c0, c1] for c0 + c1·u.
//
//	proof.json   {"pi_a":G1, "pi_b":G2, "pi_c":G1, "protocol":"groth16", "curve":"bn128"}
//	public.json  ["decimal", …]   the public wires 1 … nPublic
//	verification_key.json  {"protocol","curve","nPublic","vk_alpha_1","vk_beta_2",
//	             "vk_gamma_2","vk_delta_2","vk_alphabeta_12","IC":[G1, …]}

// ProofJSON is a proof as snarkjs writes it.
type ProofJSON struct {
	A        [3]string    `json:"pi_a"`
	B        [3][2]string `json:"pi_b"`
	C        [3]string    `json:"pi_c"`
	Protocol string       `json:"protocol"`
	Curve    string       `json:"curve"`
}

// JSON returns p in snarkjs's layout.
func (p *Proof) JSON() ProofJSON {
	return ProofJSON{A: g1JSON(&p.A), B: g2JSON(&p.B), C: g1JSON(&p.C), Protocol: "groth16", Curve: "bn128"}
}

func g1JSON(p *bn254.G1Affine) [3]string {
	if p.IsInfinity() {
		return [3]string{"0", "1", "0"}
	}
	return [3]string{p.X.String(), p.Y.String(), "1"}
}

func g2JSON(p *bn254.G2Affine) [3][2]string {
	if p.IsInfinity() {
		return [3][2]string{{"0", "0"}, {"1", "0"}, {"0", "0"}}
	}
	return [3][2]string{{p.X.A0.String(), p.X.A1.String()}, {p.Y.A0.String(), p.Y.A1.String()}, {"1", "0"}}
}

// VerifyingKey is a Groth16 verifying key: e(A, B) = e(α, β)·e(Σ xᵢ·ICᵢ, γ)·e(C, δ).
type VerifyingKey struct {
	NPublic               int
	Alpha1                bn254.G1Affine
	Beta2, Gamma2, Delta2 bn254.G2Affine
	IC                    []bn254.G1Affine // NPublic+1: the one wire's, then each public input's
}

type vkeyJSON struct {
	Protocol string       `json:"protocol"`
	Curve    string       `json:"curve"`
	NPublic  int          `json:"nPublic"`
	Alpha1   [3]string    `json:"vk_alpha_1"`
	Beta2    [3][2]string `json:"vk_beta_2"`
	Gamma2   [3][2]string `json:"vk_gamma_2"`
	Delta2   [3][2]string `json:"vk_delta_2"`
	IC       [][3]string  `json:"IC"`
}

// ReadVerifyingKey reads snarkjs's verification_key.json.
func ReadVerifyingKey(path string) (*VerifyingKey, error) {
	data, err := readJSONFile(context.Background(), path, vkeyJSONLimit, "verifying key")
	if err != nil {
		return nil, err
	}
	var j vkeyJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if j.Protocol != "groth16" || (j.Curve != "bn128" && j.Curve != "bn254") {
		return nil, fmt.Errorf("%s: a %q key on %q; only groth16 on bn128 is supported", path, j.Protocol, j.Curve)
	}
	if j.NPublic < 0 || len(j.IC) != j.NPublic+1 {
		return nil, fmt.Errorf("%s: %d IC points for %d public inputs", path, len(j.IC), j.NPublic)
	}
	vk := &VerifyingKey{NPublic: j.NPublic, IC: make([]bn254.G1Affine, len(j.IC))}
	errs := []error{
		parseG1(&vk.Alpha1, j.Alpha1, "vk_alpha_1"),
		parseG2(&vk.Beta2, j.Beta2, "vk_beta_2"),
		parseG2(&vk.Gamma2, j.Gamma2, "vk_gamma_2"),
		parseG2(&vk.Delta2, j.Delta2, "vk_delta_2"),
	}
	for i := range j.IC {
		errs = append(errs, parseG1(&vk.IC[i], j.IC[i], fmt.Sprintf("IC[%d]", i)))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vk, nil
}

// Bounds on the JSON files a verifier reads, so that a path naming a huge
// file, a device or a FIFO nobody writes to fails with an error naming it
// instead of filling memory or hanging. snarkjs writes a proof.json of
// about 900 bytes, and each public input as at most 77 digits, quotes, a
// comma and an indent; the limits leave room for any other formatting.
const (
	proofJSONLimit     = 64 << 10
	publicJSONPerInput = 256
	publicJSONSlack    = 4 << 10
	// a verification_key.json takes about 250 bytes per public input:
	// 64 MiB is some 250 000 of them, far past what snarkjs proves
	vkeyJSONLimit = 64 << 20
)

// publicJSONLimit is the most a public.json of n inputs can take.
func publicJSONLimit(n int) int64 { return publicJSONSlack + publicJSONPerInput*int64(max(n, 0)) }

// readJSONFile reads a whole JSON file of at most limit bytes, within ctx
// and boundedread's default deadline; errors name the file.
func readJSONFile(ctx context.Context, path string, limit int64, what string) ([]byte, error) {
	data, err := boundedread.ReadAll(ctx, path, limit, boundedread.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, nil
}

// ReadProof reads snarkjs's proof.json, of at most 64 KiB, within ctx.
func ReadProof(ctx context.Context, path string) (*Proof, error) {
	data, err := readJSONFile(ctx, path, proofJSONLimit, "proof")
	if err != nil {
		return nil, err
	}
	return parseProof(path, data)
}

func parseProof(path string, data []byte) (*Proof, error) {
	var j ProofJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("proof %s: %w", path, err)
	}
	if j.Protocol != "" && j.Protocol != "groth16" {
		return nil, fmt.Errorf("proof %s: a %q proof; only groth16 is supported", path, j.Protocol)
	}
	p := new(Proof)
	if err := errors.Join(parseG1(&p.A, j.A, "pi_a"), parseG2(&p.B, j.B, "pi_b"), parseG1(&p.C, j.C, "pi_c")); err != nil {
		return nil, fmt.Errorf("proof %s: %w", path, err)
	}
	return p, nil
}

// ReadPublic reads snarkjs's public.json for a key of n public inputs
// (decimal strings, each below r), within ctx; the file is refused unread
// when it is longer than n inputs can be. The count itself is checked by
// Verify.
func ReadPublic(ctx context.Context, path string, n int) ([]fr.Element, error) {
	data, err := readJSONFile(ctx, path, publicJSONLimit(n), "public inputs")
	if err != nil {
		return nil, err
	}
	return parsePublic(path, data)
}

func parsePublic(path string, data []byte) ([]fr.Element, error) {
	var ss []string
	if err := json.Unmarshal(data, &ss); err != nil {
		return nil, fmt.Errorf("public inputs %s: %w", path, err)
	}
	out := make([]fr.Element, len(ss))
	for i, s := range ss {
		v, ok := parseDecimal(s)
		if !ok || v.Sign() < 0 || v.Cmp(fr.Modulus()) >= 0 {
			return nil, fmt.Errorf("public inputs %s: input %d (%s) is not a field element", path, i, quoteShort(s))
		}
		out[i].SetBigInt(v)
	}
	return out, nil
}

// Verify checks a proof of public against vk:
//
//	e(−A, B)·e(α, β)·e(Σ xᵢ·ICᵢ, γ)·e(C, δ) = 1,  x₀ = 1
//
// A and C must be on the curve, B on the twist and in the r-torsion subgroup.
func (vk *VerifyingKey) Verify(p *Proof, public []fr.Element) error {
	if len(public) != vk.NPublic {
		return fmt.Errorf("%d public inputs, the key wants %d", len(public), vk.NPublic)
	}
	if !p.A.IsOnCurve() || !p.C.IsOnCurve() || !p.B.IsOnCurve() || !p.B.IsInSubGroup() {
		return fmt.Errorf("proof points are not on the curve or not in its subgroup")
	}
	var x bn254.G1Jac
	x.FromAffine(&vk.IC[0])
	if vk.NPublic > 0 {
		var t bn254.G1Jac
		if _, err := t.MultiExp(vk.IC[1:], public, ecc.MultiExpConfig{NbTasks: 1}); err != nil {
			return err
		}
		x.AddAssign(&t)
	}
	var xa, negA bn254.G1Affine
	xa.FromJacobian(&x)
	negA.Neg(&p.A)
	ok, err := bn254.PairingCheck(
		[]bn254.G1Affine{negA, vk.Alpha1, xa, p.C},
		[]bn254.G2Affine{p.B, vk.Beta2, vk.Gamma2, vk.Delta2})
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("invalid proof")
	}
	return nil
}

// ─── decimal points ───

// parseDecimal parses a decimal of a field's size: at most 100 characters
// (77 digits, and room for leading zeros), since Go's decimal parse is
// quadratic in the length and a verification key may hold megabytes.
func parseDecimal(s string) (*big.Int, bool) {
	if len(s) > 100 {
		return nil, false
	}
	return new(big.Int).SetString(s, 10)
}

// quoteShort quotes s for an error, or gives its length when it is long.
func quoteShort(s string) string {
	if len(s) > 100 {
		return fmt.Sprintf("a value of %d characters", len(s))
	}
	return strconv.Quote(s)
}

func parseFp(dst *fp.Element, s, what string) error {
	v, ok := parseDecimal(s)
	if !ok || v.Sign() < 0 || v.Cmp(fp.Modulus()) >= 0 {
		return fmt.Errorf("%s: %s is not a base-field element", what, quoteShort(s))
	}
	dst.SetBigInt(v)
	return nil
}

func parseG1(p *bn254.G1Affine, c [3]string, what string) error {
	switch c[2] {
	case "0":
		*p = bn254.G1Affine{}
		return nil
	case "1":
	default:
		return fmt.Errorf("%s: third coordinate %q, want affine (\"1\")", what, c[2])
	}
	if err := errors.Join(parseFp(&p.X, c[0], what), parseFp(&p.Y, c[1], what)); err != nil {
		return err
	}
	if !p.IsOnCurve() {
		return fmt.Errorf("%s: not on the curve", what)
	}
	return nil
}

func parseG2(p *bn254.G2Affine, c [3][2]string, what string) error {
	switch {
	case c[2] == [2]string{"0", "0"}:
		*p = bn254.G2Affine{}
		return nil
	case c[2] == [2]string{"1", "0"}:
	default:
		return fmt.Errorf("%s: third coordinate %q, want affine ([\"1\",\"0\"])", what, c[2])
	}
	if err := errors.Join(parseFp(&p.X.A0, c[0][0], what), parseFp(&p.X.A1, c[0][1], what),
		parseFp(&p.Y.A0, c[1][0], what), parseFp(&p.Y.A1, c[1][1], what)); err != nil {
		return err
	}
	if !p.IsOnCurve() || !p.IsInSubGroup() {
		return fmt.Errorf("%s: not in G2", what)
	}
	return nil
}

// VerifyFiles checks a snarkjs proof.json against its public.json, given in
// either order (public.json is the array), within ctx. Each file is read
// once and bounded (see proofJSONLimit); errors name the file.
func VerifyFiles(ctx context.Context, vk *VerifyingKey, proofPath, publicPath string) error {
	// read both under the larger bound, then hold each to its own
	limit := max(int64(proofJSONLimit), publicJSONLimit(vk.NPublic))
	proofData, err := readJSONFile(ctx, proofPath, limit, "proof")
	if err != nil {
		return err
	}
	publicData, err := readJSONFile(ctx, publicPath, limit, "public inputs")
	if err != nil {
		return err
	}
	if isJSONArray(proofData) && !isJSONArray(publicData) {
		proofPath, publicPath = publicPath, proofPath
		proofData, publicData = publicData, proofData
	}
	if n := int64(len(proofData)); n > proofJSONLimit {
		return fmt.Errorf("proof %s: %d bytes, more than the %d a proof.json can be", proofPath, n, proofJSONLimit)
	}
	if n, lim := int64(len(publicData)), publicJSONLimit(vk.NPublic); n > lim {
		return fmt.Errorf("public inputs %s: %d bytes, more than the %d that %d inputs can be", publicPath, n, lim, vk.NPublic)
	}
	p, err := parseProof(proofPath, proofData)
	if err != nil {
		return err
	}
	pub, err := parsePublic(publicPath, publicData)
	if err != nil {
		return err
	}
	if err := vk.Verify(p, pub); err != nil {
		return fmt.Errorf("%s: %w", proofPath, err)
	}
	return nil
}

// isJSONArray tells whether data is a JSON array (a public.json) rather
// than an object (a proof.json).
func isJSONArray(data []byte) bool {
	for _, b := range data {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b == '['
	}
	return false
}
