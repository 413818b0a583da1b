package circomsrc

import (
	"encoding/binary"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// ParseWtns parses a snarkjs witness (.wtns, versions 1 and 2) of BN254,
// as ProveWtns takes it; ParseWtnsOf reads one of any curve.
func ParseWtns(data []byte) ([]fr.Element, error) {
	id, w, err := ParseWtnsOf(data)
	if err != nil {
		return nil, err
	}
	if id != curve.BN254 {
		return nil, fmt.Errorf("wtns: a %s witness; ParseWtns reads BN254's (ParseWtnsOf reads any)", id)
	}
	return proofdata.Elements[fr.Element](w), nil
}

// ParseWtnsOf parses a snarkjs witness (.wtns, versions 1 and 2):
//
//	1 header  n8 u32, prime (n8 bytes), nWitness u32
//	2 values  nWitness × n8 bytes, standard form, little-endian
//
// The prime names the curve (BN254's or BLS12-381's r), and every value
// must be below it; the first value is the one wire and must be 1. The
// values come back in Montgomery form of that curve's Fr.
func ParseWtnsOf(data []byte) (curve.ID, []proofdata.Scalar, error) {
	f, err := parseBinFile(data, "wtns", 2)
	if err != nil {
		return 0, nil, err
	}
	cc, n, err := wtnsHeader(f)
	if err != nil {
		return 0, nil, err
	}
	r, err := f.section(2, "values", wtnsValues(n))
	if err != nil {
		return 0, nil, err
	}
	w := make([]proofdata.Scalar, n)
	if i, err := cc.fromLE(w, r.take(32*int(n))); err != nil {
		return 0, nil, fmt.Errorf("wtns: values section: value %d is not below the field modulus", i)
	}
	if n == 0 || !cc.isOne(w[0]) {
		return 0, nil, fmt.Errorf("wtns: the first value (the one wire) is not 1")
	}
	return cc.id(), w, r.done()
}

// wtnsHeader reads a wtns's header section: n8, a prime of n8 bytes, the
// count of values (n8 + 8 bytes).
func wtnsHeader(f *binFile) (circomCurve, uint32, error) {
	r, err := f.sectionBy(1, "header", 4, func(head []byte) boundedread.Need {
		n8 := binary.LittleEndian.Uint32(head)
		return boundedread.Exactly(boundedread.Items(uint64(n8), 1, 8), fmt.Sprintf("a %d-byte prime and a count", n8))
	})
	if err != nil {
		return nil, 0, err
	}
	cc := r.field("field", false)
	n := r.u32()
	if err := r.done(); err != nil {
		return nil, 0, err
	}
	return cc, n, nil
}

// wtnsValues is what a values section of n values holds.
func wtnsValues(n uint32) boundedread.Need {
	return boundedread.Exactly(boundedread.Items(uint64(n), 32, 0), fmt.Sprintf("%d values", n))
}
