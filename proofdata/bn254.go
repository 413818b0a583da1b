package proofdata

// The curve-specific part of the data model: BN254's scalar field and
// groups. A second curve (BLS12-381) instantiates these types; the rest of
// the package does not name a curve.

import (
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
)

// Key is the part of a Groth16 proving key the device needs: the bases of
// every MSM, each query already filtered to the scalars it will be paired
// with (points at infinity dropped, as gnark's pk.InfinityA/B do).
type Key struct {
	Domain      *fft.Domain // size n; for HOddCoset its coset shift is ω₂ₙ
	HConvention HConvention

	A  []bn254.G1Affine // [A_j(τ)]₁
	B1 []bn254.G1Affine // [B_j(τ)]₁
	K  []bn254.G1Affine // [(βA_j+αB_j+C_j)(τ)/δ]₁, private wires only
	Z  []bn254.G1Affine // the H query: [τ^i Z(τ)/δ]₁ (gnark) or odd Lagrange bases (snarkjs)
	B2 []bn254.G2Affine // [B_j(τ)]₂, same wires as B1
}

// N is the evaluation domain's size.
func (k *Key) N() int { return int(k.Domain.Cardinality) }

// HLen is how many terms of h meet the H query in its MSM.
func (k *Key) HLen() int { return len(k.Z) }

// Query is one MSM's scalars split by value, the output of pin/transfer's
// classification: zeros are dropped, ones are summed by batch-addition (one
// mixed addition each, no scalar multiplication), and only the significant
// rest goes to the tail MSM. In a boolean-heavy circuit most wires are 0 or 1.
type Query struct {
	Len     int      // how many scalars (and bases) the query has
	Ones    []uint64 // bit j of Ones[j/64] is set ⇔ scalar j == 1
	NumOnes int

	// Dense means every scalar is significant: Idx is nil and Vals holds all
	// Len scalars in order, so the tail MSM runs on the bases as they are.
	Dense bool
	Idx   []uint32     // ascending indexes of the significant scalars
	Vals  []fr.Element // Vals[k] is the scalar of base Idx[k] (Montgomery form)
}

// IsOne reports whether scalar j was classified as one.
func (q *Query) IsOne(j int) bool { return q.Ones[j>>6]&(1<<(uint(j)&63)) != 0 }

// Vectors is one proof's input to the device.
type Vectors struct {
	// Constraint evaluations a = A·W, b = B·W, c = C·W, length ≤ n; the
	// backend treats missing entries as zero. ComputeH may overwrite them.
	A, B, C []fr.Element

	QA, QB, QK Query // scalars of the A, B (G1 and G2) and K queries
}

// G1Sums holds one result per G1 query.
type G1Sums struct {
	A, B1, K bn254.G1Jac
}

// Classify fills q with the scalars w[sel[j]], j < len(sel): a bitmap of the
// ones, and the significant rest compacted with their indexes; zeros are
// dropped. ones, idx and vals are the buffers it fills (len(ones) ≥
// ⌈len(sel)/64⌉, len(idx) and len(vals) ≥ len(sel)); when nothing is zero or
// one the query is Dense and q.Idx is nil (idx unused).
func Classify(q *Query, w []fr.Element, sel []uint32, ones []uint64, idx []uint32, vals []fr.Element) {
	n := len(sel)
	*q = Query{Len: n, Ones: ones[:(n+63)/64]}
	k, numOnes := ClassifyRange(w, sel, 0, n, q.Ones, idx, vals)
	q.NumOnes = numOnes
	q.Idx, q.Vals = idx[:k], vals[:k]
	if k == n {
		q.Idx, q.Dense = nil, true
	}
}

// ClassifyRange classifies the scalars w[sel[j]] for j in [lo, hi), lo a
// multiple of 64: ones gets the range's bitmap words (cleared first), idx
// (absolute j) and vals the significant scalars. It returns how many
// scalars were significant and how many were one.
func ClassifyRange(w []fr.Element, sel []uint32, lo, hi int, ones []uint64, idx []uint32, vals []fr.Element) (k, numOnes int) {
	clear(ones[:(hi-lo+63)/64])
	for i, wire := range sel[lo:hi] {
		s := &w[wire]
		switch {
		case s.IsZero():
		case s.IsOne():
			ones[i>>6] |= 1 << (uint(i) & 63)
			numOnes++
		default:
			idx[k] = uint32(lo + i)
			vals[k] = *s
			k++
		}
	}
	return k, numOnes
}
