package proofdata

import (
	"unsafe"

	"github.com/zkpipe/zkpipe/curve"
)

// Scalar is an element of a curve's scalar field in gnark-crypto's
// Montgomery form: BN254's and BLS12-381's Fr are both four 64-bit words
// (fr.Element's layout), so W, a, b, c and the classified queries are
// curve-neutral and only the curve's own code reads them as numbers, through
// Elements.
type Scalar [4]uint64

// ScalarBytes is a Scalar's size in memory and in gnark's encodings.
const ScalarBytes = 32

var _ = [1]struct{}{}[unsafe.Sizeof(Scalar{})-ScalarBytes] // compile-time: ScalarBytes is the size

// Element is a curve's scalar field element in gnark-crypto (bn254/fr,
// bls12-381/fr): the constraint is its layout, so that Elements and Scalars
// cannot view a type of another size.
type Element interface{ ~[4]uint64 }

// Elements views s as the curve's field elements E, without a copy.
func Elements[E Element](s []Scalar) []E {
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// Scalars views a curve's field elements as Scalars, without a copy.
func Scalars[E Element](e []E) []Scalar {
	return unsafe.Slice((*Scalar)(unsafe.Pointer(unsafe.SliceData(e))), len(e))
}

// One is 1 in id's scalar field (Montgomery form: R mod r, not 1).
func One(id curve.ID) Scalar { return id.Params().One }
