package proofdata

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

func TestClassifySplitsZeroOneAndSignificant(t *testing.T) {
	var two fr.Element
	two.SetUint64(2)
	w := []fr.Element{{}, fr.One(), two, fr.One(), {}, two}
	sel := []uint32{5, 0, 1, 2, 3} // scalars: 2, 0, 1, 2, 1
	var q Query
	Classify(&q, w, sel, make([]uint64, 1), make([]uint32, 5), make([]fr.Element, 5))
	if q.Len != 5 || q.NumOnes != 2 || q.Dense {
		t.Fatalf("got %+v", q)
	}
	if !q.IsOne(2) || !q.IsOne(4) || q.IsOne(0) || q.IsOne(1) || q.IsOne(3) {
		t.Errorf("ones bitmap %b", q.Ones[0])
	}
	if len(q.Idx) != 2 || q.Idx[0] != 0 || q.Idx[1] != 3 || !q.Vals[0].Equal(&two) || !q.Vals[1].Equal(&two) {
		t.Errorf("significant %v %v", q.Idx, q.Vals)
	}
	Classify(&q, []fr.Element{two, two}, []uint32{0, 1}, make([]uint64, 1), make([]uint32, 2), make([]fr.Element, 2))
	if !q.Dense || q.Idx != nil || len(q.Vals) != 2 {
		t.Errorf("all significant should be dense: %+v", q)
	}
}
