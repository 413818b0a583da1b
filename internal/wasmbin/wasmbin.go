// Package wasmbin holds the few pieces of the WebAssembly binary format
// that zkpipe's wasm editors share: circomsrc's witness-reader patch and
// the hostile calculators of internal/hostilewasm.
package wasmbin

import "errors"

// Uleb reads an unsigned LEB128 of at most 64 bits and its length.
func Uleb(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("bad LEB128")
}

// AppendUleb appends v as an unsigned LEB128.
func AppendUleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// AppendVec returns the vector payload (count elements) with elem added.
func AppendVec(payload []byte, count uint64, elem []byte) []byte {
	_, k, _ := Uleb(payload)
	out := AppendUleb(nil, count+1)
	out = append(out, payload[k:]...)
	return append(out, elem...)
}

// SkipLimits returns the length of a limits description: a flag, the
// minimum and, with flag bit 0, a maximum.
func SkipLimits(b []byte) (int, error) {
	if len(b) == 0 || b[0] > 7 {
		return 0, errors.New("bad limits")
	}
	p := 1
	for k := 0; k < 1+int(b[0]&1); k++ {
		_, n, err := Uleb(b[p:])
		if err != nil {
			return 0, errors.New("bad limits")
		}
		p += n
	}
	return p, nil
}
