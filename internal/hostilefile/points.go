package hostilefile

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
)

// Points on their curve but outside its prime-order subgroup, for a key
// file that must be refused at load: found by trying x = 1, 2, … (almost
// every point of BLS12-381's G1 and of either curve's G2 is outside it;
// BN254's G1 has cofactor 1, no such point).

// OutsideBLS12381G1 is a point of BLS12-381's G1 curve outside G1.
func OutsideBLS12381G1() bls12381.G1Affine {
	var four bls12381.G1Affine
	four.X.SetUint64(4) // y² = x³ + 4
	for x := uint64(1); ; x++ {
		var p bls12381.G1Affine
		p.X.SetUint64(x)
		rhs := p.X
		rhs.Square(&rhs).Mul(&rhs, &p.X).Add(&rhs, &four.X)
		if p.Y.Sqrt(&rhs) != nil && p.IsOnCurve() && !p.IsInSubGroup() {
			return p
		}
	}
}

// OutsideBLS12381G2 is a point of BLS12-381's twist outside G2.
func OutsideBLS12381G2() bls12381.G2Affine {
	var b bls12381.E2 // y² = x³ + 4(1+u)
	b.A0.SetUint64(4)
	b.A1.SetUint64(4)
	for x := uint64(1); ; x++ {
		var p bls12381.G2Affine
		p.X.A0.SetUint64(x)
		var rhs bls12381.E2
		rhs.Square(&p.X).Mul(&rhs, &p.X).Add(&rhs, &b)
		if p.Y.Sqrt(&rhs) != nil && p.IsOnCurve() && !p.IsInSubGroup() {
			return p
		}
	}
}

// OutsideBN254G2 is a point of BN254's twist outside G2.
func OutsideBN254G2() bn254.G2Affine {
	var b, xi bn254.E2 // y² = x³ + 3/(9+u)
	b.A0.SetUint64(3)
	xi.A0.SetUint64(9)
	xi.A1.SetUint64(1)
	xi.Inverse(&xi)
	b.Mul(&b, &xi)
	for x := uint64(1); ; x++ {
		var p bn254.G2Affine
		p.X.A0.SetUint64(x)
		var rhs bn254.E2
		rhs.Square(&p.X).Mul(&rhs, &p.X).Add(&rhs, &b)
		if p.Y.Sqrt(&rhs) != nil && p.IsOnCurve() && !p.IsInSubGroup() {
			return p
		}
	}
}
