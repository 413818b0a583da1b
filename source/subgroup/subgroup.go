// Package subgroup checks that a key's points are in their group's
// prime-order subgroup, as they are loaded: a point on the curve but
// outside it (BLS12-381's G1 and G2, BN254's G2; BN254's G1 has cofactor
// 1) would spoil every proof made with the key, at the last stage and with
// an error that blames the witness. The check is batched (Batch: 64 sums
// of random subsets of the points, each sum checked alone; an error
// probability under 2^-64), and only a batch that fails is checked point
// by point, to name the first bad one.
package subgroup

import (
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"sync"
)

// Jac is a group's Jacobian point type J, as gnark-crypto's G1Jac and
// G2Jac are, over its affine points A: its zero value is the point at
// infinity.
type Jac[A, J any] interface {
	*J
	AddMixed(a *A) *J
	AddAssign(q *J) *J
	IsInSubGroup() bool
}

// Batch reports whether the points ps are all in the prime-order subgroup,
// wrong with a probability under 2^-64: it checks 64 sums, each of a
// random subset of ps (each point in each sum with probability ½, the
// method of gnark-crypto's IsInSubGroupBatch), a point outside making a
// sum that holds it fall outside, for any other points. The 64 sums are
// built 8 at a time from 256 buckets, each point added to the bucket of
// 8 random bits (the sums that hold it): 8 additions a point and 8·1024
// to sum the buckets, where gnark-crypto's adds each point to each sum it
// is in (32 additions a point, on average) and a point's own check is a
// scalar multiplication by the curve's seed (some 130 doublings). It runs
// on the caller's goroutine: a loader checks its chunks on its workers.
//
// Measured on a 2^16 slice (BenchmarkCheck2to16): see the closing note of
// issue 45; the cost is the buckets' additions, about a conversion's.
func Batch[A, J any, PJ Jac[A, J]](ps []A) bool {
	sc := scratchPool[J]().Get().(*scratch[J])
	defer scratchPool[J]().Put(sc)
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		panic(err) // crypto/rand does not fail (Go 1.24)
	}
	sc.rng.Seed(seed)
	for range 8 {
		clear(sc.buckets[:])
		var r uint64
		for i := range ps {
			if i%8 == 0 {
				r = sc.rng.Uint64()
			}
			PJ(&sc.buckets[byte(r>>(8*(i%8)))]).AddMixed(&ps[i])
		}
		for k := range 8 {
			var zero J
			sc.sum = zero
			for b := range sc.buckets {
				if b>>k&1 == 1 {
					PJ(&sc.sum).AddAssign(&sc.buckets[b])
				}
			}
			if !PJ(&sc.sum).IsInSubGroup() {
				return false
			}
		}
	}
	return true
}

// scratch is a batch's memory, reused: its buckets (some 37 KiB of
// BLS12-381's G1Jac, 73 KiB of its G2Jac), its sum, its random bits.
type scratch[J any] struct {
	buckets [256]J
	sum     J
	rng     rand.ChaCha8
}

// pools holds a *sync.Pool of *scratch[J] by J.
var pools sync.Map

func scratchPool[J any]() *sync.Pool {
	p, _ := pools.LoadOrStore((*scratch[J])(nil), &sync.Pool{New: func() any { return new(scratch[J]) }})
	return p.(*sync.Pool)
}

// Check returns an error naming the first point of ps not in the
// subgroup, its index first+i, or nil. batch is the group's batched check
// (Batch; nil: every point on the curve is in the subgroup, which the
// decoder has checked); in is one point's.
func Check[P any](ps []P, first int, batch func([]P) bool, in func(*P) bool) error {
	if batch == nil || len(ps) == 0 || batch(ps) {
		return nil
	}
	for i := range ps {
		if !in(&ps[i]) {
			return fmt.Errorf("point %d is not in the prime-order subgroup", first+i)
		}
	}
	// a batch of points all in the subgroup never fails: this is
	// unreachable but for a bug
	return fmt.Errorf("points %d to %d: the batched subgroup check failed, each point passed", first, first+len(ps)-1)
}

// One is Check of the single point p, named what ("[α]₁"); cofactorOne:
// its group has cofactor 1.
func One[P any](p *P, what string, cofactorOne bool, in func(*P) bool) error {
	if cofactorOne || in(p) {
		return nil
	}
	return fmt.Errorf("%s is not in the prime-order subgroup", what)
}
