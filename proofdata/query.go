package proofdata

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
	Idx   []uint32 // ascending indexes of the significant scalars
	Vals  []Scalar // Vals[k] is the scalar of base Idx[k] (Montgomery form)
}

// IsOne reports whether scalar j was classified as one.
func (q *Query) IsOne(j int) bool { return q.Ones[j>>6]&(1<<(uint(j)&63)) != 0 }

// Vectors is one proof's input to the device.
type Vectors struct {
	// Constraint evaluations a = A·W, b = B·W, c = C·W, length ≤ n; the
	// backend treats missing entries as zero. ComputeH may overwrite them.
	A, B, C []Scalar

	QA, QB, QK Query // scalars of the A, B (G1 and G2) and K queries

	// Tail bounds the significant scalars (neither 0 nor 1) of each query:
	// W's count of them (CountSignificant), which no query, a selection of
	// distinct wires, can pass. pin/transfer's device admission counts it
	// for a backend that stages on its device, which then holds each
	// query's tail in room for that many (at 2^27 a bits circuit's worst
	// case, every scalar significant, was 13.5 GiB of its device memory;
	// its real tails are 3% of it). 0: not counted, each query's length
	// bounds its own.
	Tail int
}

// CountSignificant is how many scalars of w are neither 0 nor one (the
// curve's Montgomery 1), counted by up to workers goroutines.
func CountSignificant(w []Scalar, one Scalar, workers int) int {
	count := func(w []Scalar) int {
		k := 0
		for i := range w {
			s := &w[i]
			if s[0]|s[1]|s[2]|s[3] != 0 && *s != one {
				k++
			}
		}
		return k
	}
	parts := min(max(workers, 1), len(w)/MinClassifyPart)
	if parts <= 1 {
		return count(w)
	}
	out := make(chan int, parts)
	per := (len(w) + parts - 1) / parts
	for lo := 0; lo < len(w); lo += per {
		go func(w []Scalar) { out <- count(w) }(w[lo:min(lo+per, len(w))])
	}
	total := 0
	for lo := 0; lo < len(w); lo += per {
		total += <-out
	}
	return total
}

// Classify fills q with the scalars w[sel[j]], j < len(sel): a bitmap of the
// ones, and the significant rest compacted with their indexes; zeros are
// dropped. one is the curve's 1 (One: Montgomery form). ones, idx and vals
// are the buffers it fills (len(ones) ≥ ⌈len(sel)/64⌉, len(idx) and
// len(vals) ≥ len(sel)); when nothing is zero or one the query is Dense and
// q.Idx is nil (idx unused).
func Classify(q *Query, one Scalar, w []Scalar, sel []uint32, ones []uint64, idx []uint32, vals []Scalar) {
	n := len(sel)
	*q = Query{Len: n, Ones: ones[:(n+63)/64]}
	k, numOnes := ClassifyRange(one, w, sel, 0, n, q.Ones, idx, vals)
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
//
// A scalar is zero or one exactly when its words are those of 0 or of the
// curve's Montgomery one: gnark-crypto keeps elements reduced below r, so
// each value has one representation (fr.Element.IsZero and IsOne compare
// words the same way).
func ClassifyRange(one Scalar, w []Scalar, sel []uint32, lo, hi int, ones []uint64, idx []uint32, vals []Scalar) (k, numOnes int) {
	clear(ones[:(hi-lo+63)/64])
	for i, wire := range sel[lo:hi] {
		s := &w[wire]
		switch {
		case s[0]|s[1]|s[2]|s[3] == 0:
		case *s == one:
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
