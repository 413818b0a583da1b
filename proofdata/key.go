package proofdata

import (
	"fmt"

	"github.com/zkpipe/zkpipe/curve"
)

// Key is the part of a Groth16 proving key the prover needs, curve-erased:
// its curve, H convention and sizes for every curve-neutral reader (the
// stages, the governor, the backends' budgets), and the points themselves
// in the curve's own types behind Bases, read only by that curve's code
// (BasesOf).
type Key struct {
	Curve       curve.ID
	HConvention HConvention
	Size        KeySize
	// Bases is a *Bases[G1, G2, D] of the curve's gnark-crypto types
	// (G1Affine, G2Affine, fft.Domain); see NewKey.
	Bases any
}

// KeySize is how many points each query of a Key has: the domain's size n,
// the A, B₁, B₂ and K queries, and Z, the H query. B₁ and B₂ are of the
// same wires (stages.Circuit.Check refuses a key where they differ).
type KeySize struct {
	N, A, B, B2, K, Z int
}

// N is the evaluation domain's size.
func (k *Key) N() int { return k.Size.N }

// HLen is how many terms of h meet the H query in its MSM.
func (k *Key) HLen() int { return k.Size.Z }

// Bases are a key's points, each query already filtered to the scalars it
// will be paired with (points at infinity dropped, as gnark's
// pk.InfinityA/B do), and the fixed points assemble adds. G1 and G2 are
// the curve's affine point types, D its fft.Domain.
type Bases[G1, G2, D any] struct {
	Domain *D // size n; for HOddCoset its coset shift is ω₂ₙ

	A  []G1 // [A_j(τ)]₁
	B1 []G1 // [B_j(τ)]₁
	K  []G1 // [(βA_j+αB_j+C_j)(τ)/δ]₁, private wires only
	Z  []G1 // the H query: [τ^i Z(τ)/δ]₁ (gnark) or odd Lagrange bases (snarkjs)
	B2 []G2 // [B_j(τ)]₂, same wires as B1

	// [α]₁, [β]₁, [δ]₁, [β]₂, [δ]₂
	Alpha1, Beta1, Delta1 G1
	Beta2, Delta2         G2
}

// NewKey wraps b, of curve id, as a Key of domain size n.
func NewKey[G1, G2, D any](id curve.ID, conv HConvention, n int, b *Bases[G1, G2, D]) *Key {
	return &Key{Curve: id, HConvention: conv, Bases: b,
		Size: KeySize{N: n, A: len(b.A), B: len(b.B1), B2: len(b.B2), K: len(b.K), Z: len(b.Z)}}
}

// BasesOf is k's points as the curve's code reads them: an error when k is
// of another curve than id (or its Bases of other types), naming both.
func BasesOf[G1, G2, D any](id curve.ID, k *Key) (*Bases[G1, G2, D], error) {
	if k.Curve != id {
		return nil, fmt.Errorf("a %s key where %s's code reads it", k.Curve, id)
	}
	b, ok := k.Bases.(*Bases[G1, G2, D])
	if !ok || b == nil {
		return nil, fmt.Errorf("%s key holds %T, not its curve's bases", id, k.Bases)
	}
	return b, nil
}
