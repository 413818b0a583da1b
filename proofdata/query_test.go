package proofdata

import (
	"testing"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/curve"
)

func TestClassifySplitsZeroOneAndSignificant(t *testing.T) {
	var two fr.Element
	two.SetUint64(2)
	w := Scalars([]fr.Element{{}, fr.One(), two, fr.One(), {}, two})
	sel := []uint32{5, 0, 1, 2, 3} // scalars: 2, 0, 1, 2, 1
	var q Query
	Classify(&q, One(curve.BN254), w, sel, make([]uint64, 1), make([]uint32, 5), make([]Scalar, 5))
	if q.Len != 5 || q.NumOnes != 2 || q.Dense {
		t.Fatalf("got %+v", q)
	}
	if !q.IsOne(2) || !q.IsOne(4) || q.IsOne(0) || q.IsOne(1) || q.IsOne(3) {
		t.Errorf("ones bitmap %b", q.Ones[0])
	}
	vals := Elements[fr.Element](q.Vals)
	if len(q.Idx) != 2 || q.Idx[0] != 0 || q.Idx[1] != 3 || !vals[0].Equal(&two) || !vals[1].Equal(&two) {
		t.Errorf("significant %v %v", q.Idx, q.Vals)
	}
	Classify(&q, One(curve.BN254), Scalars([]fr.Element{two, two}), []uint32{0, 1}, make([]uint64, 1), make([]uint32, 2), make([]Scalar, 2))
	if !q.Dense || q.Idx != nil || len(q.Vals) != 2 {
		t.Errorf("all significant should be dense: %+v", q)
	}
}

// TestClassifyByTheCurvesOne: a one is the curve's own Montgomery one, so
// BLS12-381's 1 is significant to BN254's classification and the reverse;
// each field's IsZero and IsOne agree with Classify on its own elements.
func TestClassifyByTheCurvesOne(t *testing.T) {
	bnOne, blsOne := fr.One(), blsfr.One()
	var bnTwo fr.Element
	bnTwo.SetUint64(2)
	var blsTwo blsfr.Element
	blsTwo.SetUint64(2)
	for _, c := range []struct {
		id   curve.ID
		w    []Scalar
		ones int
	}{
		{curve.BN254, Scalars([]fr.Element{bnOne, {}, bnTwo}), 1},
		{curve.BN254, Scalars([]blsfr.Element{blsOne}), 0},
		{curve.BLS12_381, Scalars([]blsfr.Element{blsOne, {}, blsTwo}), 1},
		{curve.BLS12_381, Scalars([]fr.Element{bnOne}), 0},
	} {
		sel := make([]uint32, len(c.w))
		for i := range sel {
			sel[i] = uint32(i)
		}
		var q Query
		Classify(&q, One(c.id), c.w, sel, make([]uint64, 1), make([]uint32, len(sel)), make([]Scalar, len(sel)))
		if q.NumOnes != c.ones {
			t.Errorf("%s: %d ones in %v, want %d", c.id, q.NumOnes, c.w, c.ones)
		}
	}
	if One(curve.BN254) != Scalar(fr.One()) || One(curve.BLS12_381) != Scalar(blsfr.One()) {
		t.Error("One is not the fields' Montgomery one")
	}
}
