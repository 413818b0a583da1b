// Package curve names the pairing-friendly curves zkpipe proves on and the
// constants the curve-neutral code needs of each (sizes, bit counts, the
// scalar field's Montgomery one). It is the curve seam's neutral side: the
// IDs and names are generated from internal/generator's list of curves
// (ids.go), the constants are params.go's, and everything else
// curve-specific is generated per curve from one template
// (internal/generator; notes/curve-seam.md).
package curve

import (
	"fmt"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
)

// ID is a curve zkpipe proves on. The zero ID is no curve.
type ID uint8

// String is the curve's name ("bn254", "bls12-381", as gnark's import
// paths spell them), which is also what --curve takes.
func (id ID) String() string {
	if id.Valid() {
		return names[id]
	}
	return fmt.Sprintf("curve(%d)", uint8(id))
}

// Valid reports whether id is one of All.
func (id ID) Valid() bool { return id >= 1 && int(id) < Count }

// Names lists the curves' names for a message, the last two joined by
// conj: Names("and") is "bn254 and bls12-381".
func Names(conj string) string {
	s := make([]string, len(All))
	for i, id := range All {
		s[i] = id.String()
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " " + conj + " " + s[len(s)-1]
}

// Parse reads a curve's name ("bn254", "bls12-381") or one of its aliases
// (snarkjs's "bn128"; "bls12_381", "bls12381"), in any case.
func Parse(s string) (ID, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, id := range All {
		if name == names[id] {
			return id, nil
		}
	}
	if id, ok := aliases[name]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("unknown curve %q (have %s)", s, Names("and"))
}

// FromECC is the ID of gnark's curve e; an error for a curve zkpipe does
// not prove on.
func FromECC(e ecc.ID) (ID, error) {
	for _, id := range All {
		if eccs[id] == e {
			return id, nil
		}
	}
	return 0, fmt.Errorf("curve %s: zkpipe proves on %s only", e, Names("and"))
}

// ECC is gnark's ID of the curve (ecc.UNKNOWN for an invalid id).
func (id ID) ECC() ecc.ID {
	if !id.Valid() {
		return ecc.UNKNOWN
	}
	return eccs[id]
}
