package proofdata

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/curve"
)

// classifyInput is n scalars gathered through a shuffled sel from w, of
// one of four kinds: mixed (a third each zero, one, significant), sparse
// (one in a hundred significant, bits' shape), dense (all significant,
// mulchain's), zeros.
func classifyInput(r *rand.Rand, n int, kind string) ([]Scalar, []uint32) {
	w := make([]fr.Element, n+5)
	for i := range w {
		x := r.IntN(100)
		switch {
		case kind == "zeros":
		case kind == "dense" || kind == "mixed" && x < 33 || kind == "sparse" && x == 0:
			w[i].SetUint64(r.Uint64() | 2)
		case kind == "mixed" && x < 66 || kind == "sparse" && x < 60:
			w[i].SetOne()
		}
	}
	sel := make([]uint32, n)
	for j := range sel {
		sel[j] = uint32(r.IntN(len(w)))
	}
	return Scalars(w), sel
}

// sizes around the parts' boundaries: below two parts (one part), exactly
// two, one more and one fewer, odd lengths across several parts.
var classifySizes = []int{
	1, 63, 2*MinClassifyPart - 1, 2 * MinClassifyPart, 2*MinClassifyPart + 1,
	3*MinClassifyPart - 64, 3*MinClassifyPart + 63, 5*MinClassifyPart + 12_345,
}

// ClassifyWith by any number of workers gives Classify's query exactly:
// bitmap, count of ones, compacted indexes and values, Dense.
func TestClassifyWithMatchesClassify(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	one := One(curve.BN254)
	for _, kind := range []string{"mixed", "sparse", "dense", "zeros"} {
		for _, n := range classifySizes {
			w, sel := classifyInput(r, n, kind)
			var want Query
			Classify(&want, one, w, sel, make([]uint64, (n+63)/64), make([]uint32, n), make([]Scalar, n))
			for _, workers := range []int{0, 1, 2, 3, 7, 64} {
				t.Run(fmt.Sprintf("%s/%d/%d", kind, n, workers), func(t *testing.T) {
					// buffers of garbage, as pooled ones hold
					ones, idx, vals := make([]uint64, (n+63)/64), make([]uint32, n), make([]Scalar, n)
					for i := range ones {
						ones[i] = ^uint64(0)
					}
					for i := range idx {
						idx[i], vals[i] = 7, Scalar{1, 2, 3, 4}
					}
					var got Query
					ClassifyWith(&got, one, w, sel, ones, idx, vals, workers)
					if got.Len != want.Len || got.NumOnes != want.NumOnes || got.Dense != want.Dense ||
						!slices.Equal(got.Ones, want.Ones) || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Vals, want.Vals) ||
						(got.Idx == nil) != (want.Idx == nil) {
						t.Fatalf("got %d scalars, %d ones, dense %v, %d indexes, %d values; want %d, %d, %v, %d, %d (or the contents differ)",
							got.Len, got.NumOnes, got.Dense, len(got.Idx), len(got.Vals), want.Len, want.NumOnes, want.Dense, len(want.Idx), len(want.Vals))
					}
				})
			}
		}
	}
}

// ClassifyParts' parts tile [lo, hi) in order, at least MinClassifyPart
// each and whole bitmap words but the last, no more than workers of them,
// and each part's results are ClassifyRange's over that part, at the
// part's offset; together they are ClassifyRange's over the whole range.
func TestClassifyPartsTileTheRange(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	one := One(curve.BN254)
	for _, n := range classifySizes {
		w, sel := classifyInput(r, n+128, "mixed")
		lo, hi := 128, n+128 // a range that starts past 0, as a pinned chunk's does
		m := hi - lo
		wantOnes, wantIdx, wantVals := make([]uint64, (m+63)/64), make([]uint32, m), make([]Scalar, m)
		wk, wo := ClassifyRange(one, w, sel, lo, hi, wantOnes, wantIdx, wantVals)
		for _, workers := range []int{1, 2, 5} {
			ones, idx, vals := make([]uint64, (m+63)/64), make([]uint32, m), make([]Scalar, m)
			parts := ClassifyParts(one, w, sel, lo, hi, ones, idx, vals, workers, nil)
			if len(parts) > max(workers, 1) || parts[0].Lo != lo || parts[len(parts)-1].Hi != hi {
				t.Fatalf("n %d, %d workers: %d parts from %d to %d", n, workers, len(parts), parts[0].Lo, parts[len(parts)-1].Hi)
			}
			var gotIdx []uint32
			var gotVals []Scalar
			k, o := 0, 0
			for i, p := range parts {
				if i > 0 && (p.Lo != parts[i-1].Hi || (p.Lo-lo)%64 != 0 || parts[i-1].Hi-parts[i-1].Lo < MinClassifyPart) {
					t.Fatalf("n %d, %d workers: part %d [%d, %d) after [%d, %d)", n, workers, i, p.Lo, p.Hi, parts[i-1].Lo, parts[i-1].Hi)
				}
				gotIdx = append(gotIdx, idx[p.Lo-lo:p.Lo-lo+p.K]...)
				gotVals = append(gotVals, vals[p.Lo-lo:p.Lo-lo+p.K]...)
				k, o = k+p.K, o+p.NumOnes
			}
			if k != wk || o != wo || !slices.Equal(ones, wantOnes) || !slices.Equal(gotIdx, wantIdx[:wk]) || !slices.Equal(gotVals, wantVals[:wk]) {
				t.Fatalf("n %d, %d workers: %d significant, %d ones; ClassifyRange %d, %d (or the contents differ)", n, workers, k, o, wk, wo)
			}
		}
	}
}

// CountSignificant by any number of workers is the number of scalars that
// classification keeps as significant when sel takes every wire once, and
// it bounds every query's tail.
func TestCountSignificantBoundsEveryTail(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	one := One(curve.BN254)
	for _, kind := range []string{"mixed", "sparse", "dense", "zeros"} {
		for _, n := range classifySizes {
			w, sel := classifyInput(r, n, kind)
			all := make([]uint32, len(w))
			for i := range all {
				all[i] = uint32(i)
			}
			var whole Query
			Classify(&whole, one, w, all, make([]uint64, (len(w)+63)/64), make([]uint32, len(w)), make([]Scalar, len(w)))
			for _, workers := range []int{0, 1, 3, 64} {
				got := CountSignificant(w, one, workers)
				if got != len(whole.Vals) {
					t.Fatalf("%s/%d/%d workers: %d significant, classification kept %d", kind, n, workers, got, len(whole.Vals))
				}
			}
			// sel may repeat wires (classifyInput draws it): a query of
			// distinct wires, as a key's are, stays under the count
			distinct := slices.Compact(slices.Sorted(slices.Values(sel)))
			var q Query
			Classify(&q, one, w, distinct, make([]uint64, (len(distinct)+63)/64), make([]uint32, len(distinct)), make([]Scalar, len(distinct)))
			if len(q.Vals) > len(whole.Vals) {
				t.Fatalf("%s/%d: a query of distinct wires keeps %d significant, W has %d", kind, n, len(q.Vals), len(whole.Vals))
			}
		}
	}
}
