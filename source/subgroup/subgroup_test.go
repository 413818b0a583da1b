package subgroup

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/parallel"
	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// n points of a group, g, 2g, 3g, …
func multiples[P any](n int, g P, add func(a, b *P) P) []P {
	ps := make([]P, n)
	ps[0] = g
	for i := 1; i < n; i++ {
		ps[i] = add(&ps[i-1], &g)
	}
	return ps
}

func blsG1s(n int) []bls12381.G1Affine {
	_, _, g, _ := bls12381.Generators()
	return multiples(n, g, func(a, b *bls12381.G1Affine) (s bls12381.G1Affine) { s.Add(a, b); return })
}

func blsG2s(n int) []bls12381.G2Affine {
	_, _, _, g := bls12381.Generators()
	return multiples(n, g, func(a, b *bls12381.G2Affine) (s bls12381.G2Affine) { s.Add(a, b); return })
}

func bnG2s(n int) []bn254.G2Affine {
	_, _, _, g := bn254.Generators()
	return multiples(n, g, func(a, b *bn254.G2Affine) (s bn254.G2Affine) { s.Add(a, b); return })
}

// Check passes points all in the subgroup and names the first one outside
// it, at its index from first, in batches above and below gnark-crypto's
// threshold for its probabilistic check (80 points in G1, 160 in G2).
func TestCheckNamesThePoint(t *testing.T) {
	for _, n := range []int{1, 50, 200, 1000} {
		g1 := blsG1s(n)
		if err := Check(g1, 0, Batch[bls12381.G1Affine, bls12381.G1Jac], (*bls12381.G1Affine).IsInSubGroup); err != nil {
			t.Fatalf("%d points of G1: %v", n, err)
		}
		bad := n * 2 / 3
		g1[bad] = hostilefile.OutsideBLS12381G1()
		err := Check(g1, 100, Batch[bls12381.G1Affine, bls12381.G1Jac], (*bls12381.G1Affine).IsInSubGroup)
		if want := "point " + itoa(100+bad) + " is not in the prime-order subgroup"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d points of G1, point %d outside: %v, want %q", n, bad, err, want)
		}
		g2 := bnG2s(n)
		if err := Check(g2, 0, Batch[bn254.G2Affine, bn254.G2Jac], (*bn254.G2Affine).IsInSubGroup); err != nil {
			t.Fatalf("%d points of BN254's G2: %v", n, err)
		}
		g2[bad] = hostilefile.OutsideBN254G2()
		if err := Check(g2, 0, Batch[bn254.G2Affine, bn254.G2Jac], (*bn254.G2Affine).IsInSubGroup); err == nil || !strings.Contains(err.Error(), "point "+itoa(bad)+" ") {
			t.Errorf("%d points of BN254's G2, point %d outside: %v", n, bad, err)
		}
	}
	p := hostilefile.OutsideBLS12381G2()
	if err := One(&p, "[β]₂", false, (*bls12381.G2Affine).IsInSubGroup); err == nil || !strings.Contains(err.Error(), "[β]₂ is not in") {
		t.Errorf("One: %v", err)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// BenchmarkCheck2to16: the check of 2^16 points, as a 2^16 key's slices
// have them (A, B, K each about one per wire, Z one per row), batched as
// loaders run it (per chunk of 16384 G1 / 8192 G2 points, each chunk's
// batch over all cores) against a point at a time.
//
//	go test -run - -bench Check2to16 ./source/subgroup
func BenchmarkCheck2to16(b *testing.B) {
	const n = 1 << 16
	g1, g2, bn2 := blsG1s(n), blsG2s(n), bnG2s(n)
	chunked := func(b *testing.B, n, per int, check func(start, end int) error) {
		for b.Loop() {
			for s := 0; s < n; s += per {
				if err := check(s, min(s+per, n)); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("bls12-381-G1/buckets", func(b *testing.B) {
		chunked(b, n, 16384, func(s, e int) error {
			return Check(g1[s:e], s, Batch[bls12381.G1Affine, bls12381.G1Jac], (*bls12381.G1Affine).IsInSubGroup)
		})
	})
	b.Run("bls12-381-G2/buckets", func(b *testing.B) {
		chunked(b, n, 8192, func(s, e int) error {
			return Check(g2[s:e], s, Batch[bls12381.G2Affine, bls12381.G2Jac], (*bls12381.G2Affine).IsInSubGroup)
		})
	})
	b.Run("bn254-G2/buckets", func(b *testing.B) {
		chunked(b, n, 8192, func(s, e int) error {
			return Check(bn2[s:e], s, Batch[bn254.G2Affine, bn254.G2Jac], (*bn254.G2Affine).IsInSubGroup)
		})
	})
	b.Run("bls12-381-G1/batched", func(b *testing.B) {
		chunked(b, n, 16384, func(s, e int) error {
			return Check(g1[s:e], s, bls12381.IsInSubGroupBatchG1, (*bls12381.G1Affine).IsInSubGroup)
		})
	})
	b.Run("bls12-381-G1/each", func(b *testing.B) {
		chunked(b, n, 16384, func(s, e int) error {
			return each(g1[s:e], (*bls12381.G1Affine).IsInSubGroup)
		})
	})
	b.Run("bls12-381-G2/batched", func(b *testing.B) {
		chunked(b, n, 8192, func(s, e int) error {
			return Check(g2[s:e], s, bls12381.IsInSubGroupBatchG2, (*bls12381.G2Affine).IsInSubGroup)
		})
	})
	b.Run("bls12-381-G2/each", func(b *testing.B) {
		chunked(b, n, 8192, func(s, e int) error {
			return each(g2[s:e], (*bls12381.G2Affine).IsInSubGroup)
		})
	})
	b.Run("bn254-G2/batched", func(b *testing.B) {
		chunked(b, n, 8192, func(s, e int) error {
			return Check(bn2[s:e], s, bn254.IsInSubGroupBatchG2, (*bn254.G2Affine).IsInSubGroup)
		})
	})
	b.Run("bn254-G2/each", func(b *testing.B) {
		chunked(b, n, 8192, func(s, e int) error {
			return each(bn2[s:e], (*bn254.G2Affine).IsInSubGroup)
		})
	})
}

// each checks ps a point at a time, over all cores, as gnark-crypto's
// naive batch does (its IsInSubGroup on one point: a multiplication by
// the curve's seed).
func each[P any](ps []P, in func(*P) bool) error {
	var bad atomic.Bool
	parallel.Execute(len(ps), func(start, end int) {
		for i := start; i < end; i++ {
			if !in(&ps[i]) {
				bad.Store(true)
			}
		}
	})
	if bad.Load() {
		return errors.New("a point outside")
	}
	return nil
}

// Batch finds a point outside the subgroup wherever it is among points in
// it, and passes points all in it, 200 times each: a false pass has a
// probability under 2^-64, a false failure none.
func TestBatchSound(t *testing.T) {
	g := blsG1s(300)
	out := hostilefile.OutsideBLS12381G1()
	for try := range 200 {
		if !Batch[bls12381.G1Affine, bls12381.G1Jac](g) {
			t.Fatal("points all in the subgroup failed")
		}
		bad := append([]bls12381.G1Affine(nil), g...)
		bad[(try*37)%len(bad)] = out
		if Batch[bls12381.G1Affine, bls12381.G1Jac](bad) {
			t.Fatalf("try %d: a point outside passed", try)
		}
	}
}
