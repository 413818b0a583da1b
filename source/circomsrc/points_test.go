package circomsrc

import (
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/zkpipe/zkpipe/curve"
)

// zkeyBN254 is a BN254 zkey's points; the test fails when it is another
// curve's.
func zkeyBN254(t testing.TB, z *Zkey) *ZkeyPoints[bn254.G1Affine, bn254.G2Affine] {
	t.Helper()
	p, err := PointsOf[ZkeyPoints[bn254.G1Affine, bn254.G2Affine]](curve.BN254, z.Curve, z.Points)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sameVK tells whether vk is z's verifying key (of its curve).
func sameVK(z *Zkey, vk *VerifyingKey) bool {
	return z.Curve == vk.Curve && curveOf(z.Curve).equalVK(curveOf(z.Curve).vk(z), vk)
}

// zkeyLens is the lengths of z's point sections, of either curve: A, B1,
// B2, C, IC, H.
func zkeyLens(z *Zkey) [6]int {
	switch p := z.Points.(type) {
	case *ZkeyPoints[bn254.G1Affine, bn254.G2Affine]:
		return [6]int{len(p.A), len(p.B1), len(p.B2), len(p.C), len(p.IC), len(p.H)}
	case *ZkeyPoints[bls12381.G1Affine, bls12381.G2Affine]:
		return [6]int{len(p.A), len(p.B1), len(p.B2), len(p.C), len(p.IC), len(p.H)}
	}
	return [6]int{-1, -1, -1, -1, -1, -1}
}
