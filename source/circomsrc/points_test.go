package circomsrc

import (
	"testing"

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
