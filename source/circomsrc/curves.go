package circomsrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"sync"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// A circom circuit's curve is its zkey's: the Groth16 header names the base
// field q and the scalar field r (`circom --prime bls12381` and a bls12381
// powers of tau make a BLS12-381 key), and the .wtns and the wasm name
// their prime, which must be the zkey's r. Scalars are curve-neutral
// (proofdata.Scalar: both curves' Fr are four words in Montgomery form);
// points and field arithmetic are the curve's, in curve_<c>.go, generated
// from internal/generator/templates/circomsrc_curve.go.tmpl, reached once
// per job and stage (or per item at load) through circomCurve.

// circomCurve is one curve's half of the circom source.
type circomCurve interface {
	id() curve.ID
	snarkjs() string // snarkjs's name ("bn128", "bls12381")
	r() *big.Int     // the scalar field's modulus
	q() *big.Int     // the base field's modulus

	// zkey sections
	headPoints(r *reader, z *Zkey) // [α]₁ [β]₁ [β]₂ [γ]₂ [δ]₁ [δ]₂ into a new z.Points
	ic(f *binFile, z *Zkey) error
	bodyPoints(f *binFile, z *Zkey) error
	decode(r *reader, g2 bool, first int, inf []bool) error // points checked in place (zkeydefer.go), in their subgroup too
	decodeOne(r *reader, i int) error                       // decode's of one G1 point, no subgroup check
	subgroup(raw []byte, idx []int) error                   // decoded G1 points, of these indices, in their subgroup
	hostParts(k *proofdata.Key, parts proofdata.KeyParts) (map[proofdata.KeyParts][]byte, func())
	power() (uint64, error) // snarkjsPower's K
	coef(r *reader, what item) proofdata.Scalar

	// writing a zkey, reading a ptau (zkeywrite.go, ptau.go)
	pointSize(g2 bool) int
	body(z *Zkey) (*zkeyBody, error)
	g1Bytes(v any) ([]byte, error)
	toU(dst, src []byte, g2 bool)
	putCoef(dst []byte, v proofdata.Scalar)
	ptau(raw *ptauRaw) (pts any, complete bool, err error)

	// scalars
	scalar(r *reader, what item) proofdata.Scalar         // standard form, little-endian
	fromLE(dst []proofdata.Scalar, b []byte) (int, error) // a witness calculator's output
	isOne(s proofdata.Scalar) bool
	fromBig(v *big.Int) proofdata.Scalar // v < r
	decimals(v []proofdata.Scalar) []string
	witnessValue(v any) ([]proofdata.Scalar, bool)

	// the circuit
	build(name string, z *Zkey, c *stages.Circuit) (rowMul uint64, err error)
	trim(z *Zkey)
	vk(z *Zkey) *VerifyingKey
	abc(ctx context.Context, co *[2]Coefs, w, a, b, c []proofdata.Scalar) error
	check(r *R1CS, w []proofdata.Scalar) int

	// proofs
	proof(p *stages.Points) (*Proof, error)
	equal(a, b *Proof) bool
	verify(vk *VerifyingKey, p *Proof, public []proofdata.Scalar) error
	proofJSON(p *Proof) ProofJSON
	parseProof(j *ProofJSON) (*Proof, error)
	parseVK(j *vkeyJSON) (*VerifyingKey, error)
	equalVK(a, b *VerifyingKey) bool
}

// curveOf is id's half; id is one a reader found (curveByModulus).
func curveOf(id curve.ID) circomCurve { return circomCurves[id] }

// curveByModulus is the curve whose scalar field (base, when base is set)
// has modulus m.
func curveByModulus(m *big.Int, base bool) (circomCurve, bool) {
	for _, c := range circomCurves {
		if c == nil {
			continue
		}
		f := c.r()
		if base {
			f = c.q()
		}
		if f.Cmp(m) == 0 {
			return c, true
		}
	}
	return nil, false
}

// supported names the curves a circom file may be of, for errors.
const supported = "BN254 (circom's default, snarkjs's bn128) and BLS12-381 (circom --prime bls12381)"

// field reads a field size n8 (u32) and a modulus of n8 bytes, and returns
// the curve whose scalar field (base field, when base is set) it is.
func (r *reader) field(what string, base bool) circomCurve {
	n8 := r.u32()
	if r.err != nil {
		return nil
	}
	if n8 == 0 || n8 > 64 {
		r.err = fmt.Errorf("%s: %s section: %s of %d bytes; only %s are supported", r.kind, r.name, what, n8, supported)
		return nil
	}
	m := leInt(r.take(int(n8)))
	if r.err != nil {
		return nil
	}
	c, ok := curveByModulus(m, base)
	if !ok {
		r.err = fmt.Errorf("%s: %s section: %s is %s; only %s are supported", r.kind, r.name, what, m, supported)
		return nil
	}
	want := 32 // both curves' r: 255 bits or under
	if base {
		want = (c.q().BitLen() + 63) / 64 * 8
	}
	if int(n8) != want {
		r.err = fmt.Errorf("%s: %s section: %s of %d bytes; %s's is %d", r.kind, r.name, what, n8, c.id(), want)
		return nil
	}
	return c
}

// ZkeyPoints are a zkey's points in its curve's affine types (Zkey.Points).
type ZkeyPoints[G1, G2 any] struct {
	Alpha1, Beta1, Delta1 G1
	Beta2, Gamma2, Delta2 G2

	IC    []G1 // nPublic+1: the one wire's, then each public input's
	A, B1 []G1
	B2    []G2
	C     []G1 // the private wires'
	H     []G1
}

// VKPoints are a verifying key's points (VerifyingKey.Points).
type VKPoints[G1, G2 any] struct {
	Alpha1                G1
	Beta2, Gamma2, Delta2 G2
	IC                    []G1 // NPublic+1: the one wire's, then each public input's
}

// ProofPoints are a Groth16 proof's points (Proof.Points): A = Ar, B = Bs,
// C = Krs.
type ProofPoints[G1, G2 any] struct {
	A, C G1
	B    G2
}

// PointsOf is v (a Zkey's, VerifyingKey's or Proof's Points) as *T: an
// error naming both curves when it is of another curve than want.
func PointsOf[T any](want, have curve.ID, v any) (*T, error) {
	p, ok := v.(*T)
	if have != want || !ok || p == nil {
		return nil, fmt.Errorf("%s points (%T) where %s's are wanted", have, v, want)
	}
	return p, nil
}

// limbsOf is m as n 64-bit limbs, least significant first.
func limbsOf(m *big.Int, n int) []uint64 {
	b := m.FillBytes(make([]byte, 8*n))
	l := make([]uint64, n)
	for i := range l {
		l[i] = binary.BigEndian.Uint64(b[8*(n-1-i):])
	}
	return l
}

// below compares limbs, most significant first: x < m.
func below(x, m []uint64) bool {
	for i := len(m) - 1; i >= 0; i-- {
		if x[i] != m[i] {
			return x[i] < m[i]
		}
	}
	return false
}

// snarkjs's domains: ffjavascript takes its 2^s-th root of unity as nqr^t
// (r−1 = 2^s·t, nqr the least quadratic non-residue), gnark-crypto its own.
// Both generate the one cyclic group of order 2^s, so snarkjs's root is
// gnark-crypto's to an odd power K, and so is each 2^k-th root derived
// from it: snarkjs's ωₙ is gnark-crypto's ωₙ^K. For BN254 K is 1; for
// BLS12-381 it is not. A zkey's rows (its coefficients') and its H points
// are indexed by snarkjs's powers: row i is the point ωₙ^{K·i} of
// gnark-crypto's domain, so New moves row i to K·i mod n, and H point i
// (the coset point ω₂ₙ^K·ωₙ^{K·i}) likewise, with the coset shift
// snarkjs's ω₂ₙ. The backends then see a gnark-crypto domain, unchanged.
var snarkjsPowers [curve.Count]struct {
	once sync.Once
	k    uint64
}

// snarkjsPower is K for curve id, whose field has modulus r and whose
// gnark-crypto 2^s-th root is root (s = r−1's 2-adicity).
func snarkjsPower(id curve.ID, r, root *big.Int) uint64 {
	p := &snarkjsPowers[id]
	p.once.Do(func() { p.k = discreteLog2(r, root, snarkjsRoot(r)) })
	return p.k
}

// snarkjsRoot is ffjavascript's primitive 2^s-th root of unity mod r.
func snarkjsRoot(r *big.Int) *big.Int {
	rm1 := new(big.Int).Sub(r, big.NewInt(1))
	s := rm1.TrailingZeroBits()
	t := new(big.Int).Rsh(rm1, s)
	half := new(big.Int).Rsh(rm1, 1)
	nqr := big.NewInt(2)
	for new(big.Int).Exp(nqr, half, r).Cmp(rm1) != 0 {
		nqr.Add(nqr, big.NewInt(1))
	}
	return new(big.Int).Exp(nqr, t, r)
}

// discreteLog2 is K < 2^s with g^K = h mod r, g a primitive 2^s-th root of
// unity and h in its group (Pohlig–Hellman, a bit a step).
func discreteLog2(r, g, h *big.Int) uint64 {
	s := new(big.Int).Sub(r, big.NewInt(1)).TrailingZeroBits()
	gInv := new(big.Int).ModInverse(g, r)
	var k uint64
	for i := uint(0); i < s; i++ {
		// h·g^−K has order dividing 2^(s−i); its 2^(s−1−i)-th power is 1
		// when bit i of K is 0
		x := new(big.Int).Exp(gInv, new(big.Int).SetUint64(k), r)
		x.Mul(x, h).Mod(x, r)
		if x.Exp(x, new(big.Int).Lsh(big.NewInt(1), s-1-i), r).Cmp(big.NewInt(1)) != 0 {
			k |= 1 << i
		}
	}
	return k
}

// RootOfUnity is snarkjs's ωₙ for curve id: the generator of the domain of
// n points (a power of two, at most 2^s) by which a zkey's rows and H
// points are indexed, row i being ωₙⁱ. It is ffjavascript's 2^s-th root
// to the 2^s/n, gnark-crypto's own ωₙ only where snarkjsPower's K is 1
// (BN254).
func RootOfUnity(id curve.ID, n int) (*big.Int, error) {
	cc := curveOf(id)
	if cc == nil {
		return nil, fmt.Errorf("curve %v: not one of %s", id, supported)
	}
	r := cc.r()
	s := new(big.Int).Sub(r, big.NewInt(1)).TrailingZeroBits()
	if n < 1 || n&(n-1) != 0 || uint(log2(n)) > s {
		return nil, fmt.Errorf("%s: no domain of %d points (a power of two up to 2^%d)", id, n, s)
	}
	e := new(big.Int).Lsh(big.NewInt(1), s-uint(log2(n)))
	return e.Exp(snarkjsRoot(r), e, r), nil
}
