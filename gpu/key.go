package gpu

import (
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
)

// HConvention says how a circuit's H query was built, and so how the prover
// must evaluate h before its MSM.
type HConvention int

const (
	// HDivideByZ is gnark's: h = (a·b − c)/Z evaluated on the coset g·⟨ω⟩ and
	// interpolated back, n−1 coefficients in bit-reversed order, matching
	// pk.G1.Z (which gnark's setup stores bit-reversed).
	HDivideByZ HConvention = iota
	// HOddCoset is snarkjs's: the zkey's H points are the odd-indexed Lagrange
	// bases of the 2n domain, so h_i = a(ω₂ₙ^{2i+1})·b(…) − c(…) in natural
	// order, n terms, and nothing is divided by Z.
	HOddCoset
)

// Key is the part of a Groth16 proving key the device needs: the bases of
// every MSM, each query already filtered to the scalars it will be paired
// with (points at infinity dropped, as gnark's pk.InfinityA/B do).
type Key struct {
	Domain      *fft.Domain // size n; for HOddCoset its coset shift is ω₂ₙ
	HConvention HConvention

	A  []bn254.G1Affine // [A_j(τ)]₁
	B1 []bn254.G1Affine // [B_j(τ)]₁
	K  []bn254.G1Affine // [(βA_j+αB_j+C_j)(τ)/δ]₁, private wires only
	Z  []bn254.G1Affine // the H query: [τ^i Z(τ)/δ]₁ (gnark) or odd Lagrange bases (snarkjs)
	B2 []bn254.G2Affine // [B_j(τ)]₂, same wires as B1
}

// N is the evaluation domain's size.
func (k *Key) N() int { return int(k.Domain.Cardinality) }

// HLen is how many terms of h meet the H query in its MSM.
func (k *Key) HLen() int { return len(k.Z) }

// Resident is a Key loaded onto a device. It is shared by every job of its
// circuit and safe for concurrent use; Close frees the device copy.
type Resident interface {
	Key() *Key
	Close() error
}
