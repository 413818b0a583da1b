package circomsrc

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// ParseWtns parses a snarkjs witness (.wtns, versions 1 and 2):
//
//	1 header  n8 u32, prime (n8 bytes), nWitness u32
//	2 values  nWitness × n8 bytes, standard form, little-endian
//
// The prime must be BN254's r and every value below it; the first value is
// the one wire and must be 1.
func ParseWtns(data []byte) ([]fr.Element, error) {
	f, err := parseBinFile(data, "wtns", 2)
	if err != nil {
		return nil, err
	}
	r, err := f.section(1, "header")
	if err != nil {
		return nil, err
	}
	r.prime(fr.Modulus(), "field")
	n := r.u32()
	if err := r.done(); err != nil {
		return nil, err
	}
	if r, err = f.section(2, "values"); err != nil {
		return nil, err
	}
	if err := r.need(uint64(n), 32, 0, "values"); err != nil {
		return nil, err
	}
	w := make([]fr.Element, n)
	for i := range w {
		if w[i] = r.fr(item{"value", i}); r.err != nil {
			return nil, r.err
		}
	}
	if n == 0 || !w[0].IsOne() {
		return nil, fmt.Errorf("wtns: the first value (the one wire) is not 1")
	}
	return w, r.done()
}
