package curve

import (
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfp "github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bnfp "github.com/consensys/gnark-crypto/ecc/bn254/fp"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Params are a curve's constants that curve-neutral code sizes and
// classifies by. Both scalar fields are four 64-bit words in gnark-crypto's
// Montgomery form (proofdata.Scalar); the base fields differ (4 words for
// BN254, 6 for BLS12-381), and so do the points.
type Params struct {
	ScalarBits int       // bits of the scalar field's modulus r (fr.Bits)
	One        [4]uint64 // 1 in the scalar field, Montgomery form (R mod r)
	FpBytes    int       // a base-field element, canonical encoding (fp.Bytes)
	// A point in gnark-crypto's memory layout (what the bases and MSM
	// scratch hold): affine G1 and G2.
	G1AffineBytes, G2AffineBytes int
	// TwoAdicity is the largest power of two dividing r − 1: the largest
	// NTT domain is 2^TwoAdicity.
	TwoAdicity int
}

var params = [Count]Params{
	BN254: {
		ScalarBits: bnfr.Bits, One: bnfr.One(), FpBytes: bnfp.Bytes,
		G1AffineBytes: int(unsafe.Sizeof(bn254.G1Affine{})), G2AffineBytes: int(unsafe.Sizeof(bn254.G2Affine{})),
		TwoAdicity: 28,
	},
	BLS12_381: {
		ScalarBits: blsfr.Bits, One: blsfr.One(), FpBytes: blsfp.Bytes,
		G1AffineBytes: int(unsafe.Sizeof(bls12381.G1Affine{})), G2AffineBytes: int(unsafe.Sizeof(bls12381.G2Affine{})),
		TwoAdicity: 32,
	},
}

// Params are id's constants; an invalid id panics (a programmer's error:
// IDs come from Parse, FromECC or the constants).
func (id ID) Params() Params {
	if !id.Valid() {
		panic("curve: no parameters for " + id.String())
	}
	return params[id]
}
