// Package curve names the pairing-friendly curves zkpipe proves on and the
// constants the curve-neutral code needs of each (sizes, bit counts, the
// scalar field's Montgomery one). It is the curve seam's neutral side:
// everything else curve-specific is generated per curve from one template
// (internal/generator; notes/curve-seam.md).
package curve

import (
	"fmt"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
)

// ID is a curve zkpipe proves on. The zero ID is no curve.
type ID uint8

const (
	BN254     ID = iota + 1 // alt_bn128: Ethereum's precompiles, snarkjs's default
	BLS12_381               // Zcash, Filecoin, Ethereum's EIP-2537
)

// All lists the curves, in ID order.
var All = []ID{BN254, BLS12_381}

// Count bounds the IDs: tables indexed by ID have Count entries.
const Count = int(BLS12_381) + 1

// String is the curve's name ("bn254", "bls12-381", as gnark's import
// paths spell them), which is also what --curve takes.
func (id ID) String() string {
	switch id {
	case BN254:
		return "bn254"
	case BLS12_381:
		return "bls12-381"
	}
	return fmt.Sprintf("curve(%d)", uint8(id))
}

// Valid reports whether id is one of All.
func (id ID) Valid() bool { return id == BN254 || id == BLS12_381 }

// Parse reads a curve's name: "bn254" (or snarkjs's "bn128") and
// "bls12-381" (or "bls12_381", "bls12381"), in any case.
func Parse(s string) (ID, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bn254", "bn128", "alt_bn128":
		return BN254, nil
	case "bls12-381", "bls12_381", "bls12381":
		return BLS12_381, nil
	}
	return 0, fmt.Errorf("unknown curve %q (have %s and %s)", s, BN254, BLS12_381)
}

// FromECC is the ID of gnark's curve e; an error for a curve zkpipe does
// not prove on.
func FromECC(e ecc.ID) (ID, error) {
	switch e {
	case ecc.BN254:
		return BN254, nil
	case ecc.BLS12_381:
		return BLS12_381, nil
	}
	return 0, fmt.Errorf("curve %s: zkpipe proves on %s and %s only", e, BN254, BLS12_381)
}

// ECC is gnark's ID of the curve (ecc.UNKNOWN for an invalid id).
func (id ID) ECC() ecc.ID {
	switch id {
	case BN254:
		return ecc.BN254
	case BLS12_381:
		return ecc.BLS12_381
	}
	return ecc.UNKNOWN
}
