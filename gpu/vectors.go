package gpu

import (
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

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

// Staged is one proof's Vectors as a device holds them, from Transfer until
// Free. Host keeps the host copy (CPU paths such as a CPU B_G2 read it);
// Device is the backend's own state.
type Staged struct {
	Resident Resident
	Host     *Vectors
	Device   any
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
	k, numOnes := classifyRange(w, sel, 0, n, q.Ones, idx, vals)
	q.NumOnes = numOnes
	q.Idx, q.Vals = idx[:k], vals[:k]
	if k == n {
		q.Idx, q.Dense = nil, true
	}
}

// classifyRange classifies the scalars w[sel[j]] for j in [lo, hi), lo a
// multiple of 64: ones gets the range's bitmap words (cleared first), idx
// (absolute j) and vals the significant scalars. It returns how many
// scalars were significant and how many were one.
func classifyRange(w []fr.Element, sel []uint32, lo, hi int, ones []uint64, idx []uint32, vals []fr.Element) (k, numOnes int) {
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
