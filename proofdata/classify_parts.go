package proofdata

import "sync"

// MinClassifyPart is the fewest scalars one goroutine of ClassifyParts
// takes: a part is a few hundred microseconds of gathers at this size, so a
// goroutine's start (about a microsecond) is noise, and a job below it is
// not worth splitting.
const MinClassifyPart = 1 << 16

// ClassifyPart is one part of the range ClassifyParts classified: the
// scalars w[sel[j]], Lo ≤ j < Hi. K of them were significant, NumOnes were
// one.
type ClassifyPart struct {
	Lo, Hi     int
	K, NumOnes int
}

// ClassifyParts is ClassifyRange over [lo, hi) (lo a multiple of 64) split
// into parts of at least MinClassifyPart scalars, each a multiple of 64
// but the last, classified at once by up to workers goroutines. It appends
// the parts, in order, to parts[:0] and returns them.
//
// The buffers are laid out as ClassifyRange's for the whole range, except
// that the significant scalars are compacted within each part, not across:
// part p's bitmap words are ones[(p.Lo−lo)/64:], its K indexes (absolute
// j, ascending) idx[p.Lo−lo:] and its values vals[p.Lo−lo:]. The parts'
// results in order are exactly ClassifyRange's. workers ≤ 1, or a range
// below two parts, is one part, classified in the caller's goroutine.
func ClassifyParts(one Scalar, w []Scalar, sel []uint32, lo, hi int, ones []uint64, idx []uint32, vals []Scalar, workers int, parts []ClassifyPart) []ClassifyPart {
	parts = parts[:0]
	n := hi - lo
	np := min(workers, n/MinClassifyPart)
	if np <= 1 {
		k, o := ClassifyRange(one, w, sel, lo, hi, ones, idx, vals)
		return append(parts, ClassifyPart{Lo: lo, Hi: hi, K: k, NumOnes: o})
	}
	size := (n + np - 1) / np
	size = (size + 63) / 64 * 64 // whole bitmap words a part
	for plo := lo; plo < hi; plo += size {
		parts = append(parts, ClassifyPart{Lo: plo, Hi: min(plo+size, hi)})
	}
	var wg sync.WaitGroup
	for i := range parts {
		p := &parts[i]
		off := p.Lo - lo
		classify := func() {
			p.K, p.NumOnes = ClassifyRange(one, w, sel, p.Lo, p.Hi, ones[off/64:], idx[off:], vals[off:])
		}
		if i == len(parts)-1 {
			classify() // the caller's goroutine takes the last part
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			classify()
		}()
	}
	wg.Wait()
	return parts
}

// ClassifyWith is Classify by up to workers goroutines (ClassifyParts),
// with the same result: the parts' significant scalars are then moved
// together in order, a move of K scalars for each part that follows a
// part with zeros or ones (none when the query is dense).
func ClassifyWith(q *Query, one Scalar, w []Scalar, sel []uint32, ones []uint64, idx []uint32, vals []Scalar, workers int) {
	n := len(sel)
	if workers <= 1 || n < 2*MinClassifyPart {
		Classify(q, one, w, sel, ones, idx, vals)
		return
	}
	parts := ClassifyParts(one, w, sel, 0, n, ones, idx, vals, workers, nil)
	k, numOnes := 0, 0
	for _, p := range parts {
		// p's results sit at p.Lo ≥ k; the destination [k, k+p.K) ends at or
		// before p.Hi, so no later part's results are overwritten
		if k != p.Lo {
			copy(idx[k:k+p.K], idx[p.Lo:p.Lo+p.K])
			copy(vals[k:k+p.K], vals[p.Lo:p.Lo+p.K])
		}
		k, numOnes = k+p.K, numOnes+p.NumOnes
	}
	*q = Query{Len: n, Ones: ones[:(n+63)/64], NumOnes: numOnes, Idx: idx[:k], Vals: vals[:k]}
	if k == n {
		q.Idx, q.Dense = nil, true
	}
}
