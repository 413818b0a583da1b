package circomsrc

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// ─── snarkjs JSON ────────────────────────────────────────────────────────────
//
// Points are decimal strings, affine with a third coordinate "1" (G1) or
// ["1","0"] (G2); G2 coordinates are [c0, c1] for c0 + c1·u.
//
//	proof.json   {"pi_a":G1, "pi_b":G2, "pi_c":G1, "protocol":"groth16", "curve":"bn128"|"bls12381"}
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

// JSON returns p in snarkjs's layout, "curve" its curve's snarkjs name.
func (p *Proof) JSON() ProofJSON { return curveOf(p.Curve).proofJSON(p) }

// decimal is e in canonical decimal, 0 … q−1, as snarkjs writes field
// elements. Not e.String(): gnark-crypto writes q−k as "-k" for k up to
// 65535 (an input of −3, say), which no verifier reads as a field element.
func decimal[E interface{ BigInt(*big.Int) *big.Int }](e E) string {
	return e.BigInt(new(big.Int)).String()
}

// VerifyingKey is a Groth16 verifying key: e(A, B) = e(α, β)·e(Σ xᵢ·ICᵢ, γ)·e(C, δ).
// Its points are Points, a *VKPoints[G1, G2] of the curve's types.
type VerifyingKey struct {
	Curve   curve.ID
	NPublic int
	Points  any
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
	if j.Protocol != "groth16" {
		return nil, fmt.Errorf("%s: a %q key; only groth16 is supported", path, j.Protocol)
	}
	id, err := curve.Parse(j.Curve)
	if err != nil {
		return nil, fmt.Errorf("%s: a key on %q; only %s are supported", path, j.Curve, supported)
	}
	if j.NPublic < 0 || len(j.IC) != j.NPublic+1 {
		return nil, fmt.Errorf("%s: %d IC points for %d public inputs", path, len(j.IC), j.NPublic)
	}
	vk, err := curveOf(id).parseVK(&j)
	if err != nil {
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

// ReadProof reads snarkjs's proof.json, of at most 64 KiB, within ctx; its
// curve is its "curve" (BN254 when it names none).
func ReadProof(ctx context.Context, path string) (*Proof, error) {
	data, err := readJSONFile(ctx, path, proofJSONLimit, "proof")
	if err != nil {
		return nil, err
	}
	return parseProof(path, data, 0)
}

// parseProof parses a proof.json of curve want (0: the curve it names).
func parseProof(path string, data []byte, want curve.ID) (*Proof, error) {
	var j ProofJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("proof %s: %w", path, err)
	}
	if j.Protocol != "" && j.Protocol != "groth16" {
		return nil, fmt.Errorf("proof %s: a %q proof; only groth16 is supported", path, j.Protocol)
	}
	id := want
	if j.Curve != "" {
		named, err := curve.Parse(j.Curve)
		switch {
		case err != nil:
			return nil, fmt.Errorf("proof %s: a proof on %q; only %s are supported", path, j.Curve, supported)
		case want != 0 && named != want:
			return nil, fmt.Errorf("proof %s: a %s proof for a %s verifying key", path, named, want)
		}
		id = named
	}
	if id == 0 {
		id = curve.BN254 // snarkjs names the curve; a file that does not is of its default
	}
	p, err := curveOf(id).parseProof(&j)
	if err != nil {
		return nil, fmt.Errorf("proof %s: %w", path, err)
	}
	return p, nil
}

// ReadPublic reads snarkjs's public.json for a key of curve id and n public
// inputs (decimal strings, each below r), within ctx; the file is refused
// unread when it is longer than n inputs can be. The count itself is
// checked by Verify.
func ReadPublic(ctx context.Context, path string, id curve.ID, n int) ([]proofdata.Scalar, error) {
	data, err := readJSONFile(ctx, path, publicJSONLimit(n), "public inputs")
	if err != nil {
		return nil, err
	}
	return parsePublic(path, data, id)
}

func parsePublic(path string, data []byte, id curve.ID) ([]proofdata.Scalar, error) {
	var ss []string
	if err := json.Unmarshal(data, &ss); err != nil {
		return nil, fmt.Errorf("public inputs %s: %w", path, err)
	}
	cc := curveOf(id)
	out := make([]proofdata.Scalar, len(ss))
	for i, s := range ss {
		v, ok := parseDecimal(s)
		if !ok || v.Sign() < 0 || v.Cmp(cc.r()) >= 0 {
			return nil, fmt.Errorf("public inputs %s: input %d (%s) is not a field element of %s", path, i, quoteShort(s), id)
		}
		out[i] = cc.fromBig(v)
	}
	return out, nil
}

// Verify checks a proof of public (Montgomery form of the key's Fr)
// against vk:
//
//	e(−A, B)·e(α, β)·e(Σ xᵢ·ICᵢ, γ)·e(C, δ) = 1,  x₀ = 1
//
// A and C must be in G1, B in G2; the proof must be of the key's curve.
func (vk *VerifyingKey) Verify(p *Proof, public []proofdata.Scalar) error {
	if p.Curve != vk.Curve {
		return fmt.Errorf("a %s proof for a %s verifying key", p.Curve, vk.Curve)
	}
	if len(public) != vk.NPublic {
		return fmt.Errorf("%d public inputs, the key wants %d", len(public), vk.NPublic)
	}
	return curveOf(vk.Curve).verify(vk, p, public)
}

// ─── decimal points ───

// parseDecimal parses a decimal of a field's size: at most 140 characters
// (BLS12-381's q has 115 digits, BN254's 77, and room for leading zeros),
// since Go's decimal parse is quadratic in the length and a verification
// key may hold megabytes.
func parseDecimal(s string) (*big.Int, bool) {
	if len(s) > 140 {
		return nil, false
	}
	return new(big.Int).SetString(s, 10)
}

// quoteShort quotes s for an error, or gives its length when it is long.
func quoteShort(s string) string {
	if len(s) > 140 {
		return fmt.Sprintf("a value of %d characters", len(s))
	}
	return strconv.Quote(s)
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
	p, err := parseProof(proofPath, proofData, vk.Curve)
	if err != nil {
		return err
	}
	pub, err := parsePublic(publicPath, publicData, vk.Curve)
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
