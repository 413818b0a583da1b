package circomsrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/boundedread"
)

// ReadWtnsPublic reads the public signals of the snarkjs witness at path:
// wires 1 … nPublic (wire 0 is the one wire, which must be 1), in decimal
// as a verified proof's public inputs are written. nPublic comes from the
// verifying key, which the wtns does not name. Only the header section and
// the first 1+nPublic values are read, so a witness of millions of wires
// costs a few kilobytes; sections must come in snarkjs's order (header,
// then values). The read is bounded by ctx and o (boundedread); its errors
// name the path. A regular file's section table is checked against its
// size first (checkBinTable): a wtns with trailing bytes, or a section past
// its end, is refused here as the prover refuses it.
func ReadWtnsPublic(ctx context.Context, path string, nPublic int, o boundedread.Options) ([]string, error) {
	return boundedread.Read(ctx, path, o, func(f *boundedread.File) ([]string, error) {
		if err := checkBinFileTable(f, "wtns", 2); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		in, err := ParseWtnsPublic(f, nPublic)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return in, nil
	})
}

// wtnsHeaderLimit bounds the header section: n8, a 32-byte prime, a count.
const wtnsHeaderLimit = 4096

// ParseWtnsPublic is ReadWtnsPublic over r. It reads r up to the last
// public value, skipping unknown sections before it.
func ParseWtnsPublic(r io.Reader, nPublic int) ([]string, error) {
	if nPublic < 0 || nPublic > 1<<30 {
		return nil, fmt.Errorf("wtns: %d public signals is absurd", nPublic)
	}
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("wtns: header: %w", err)
	}
	if string(head[:4]) != "wtns" {
		return nil, fmt.Errorf("not a wtns file (it does not begin with %q)", "wtns")
	}
	if v := binary.LittleEndian.Uint32(head[4:]); v == 0 || v > 2 {
		return nil, fmt.Errorf("wtns: a version this reader does not know (it knows 1 to 2)")
	}
	f := &binFile{kind: "wtns", sections: map[uint32][]byte{}}
	for range binary.LittleEndian.Uint32(head[8:]) {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return nil, fmt.Errorf("wtns: section header: %w", err)
		}
		typ, size := binary.LittleEndian.Uint32(head[:]), binary.LittleEndian.Uint64(head[4:])
		switch typ {
		case 1:
			if size > wtnsHeaderLimit {
				return nil, fmt.Errorf("wtns: header section of %d bytes, more than the %d it can be", size, wtnsHeaderLimit)
			}
			b := make([]byte, size)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, fmt.Errorf("wtns: header section: %w", err)
			}
			f.sections[1] = b
		case 2:
			return publicValues(f, r, size, nPublic)
		default:
			if _, err := io.CopyN(io.Discard, r, int64(min(size, 1<<62))); err != nil {
				return nil, fmt.Errorf("wtns: section type %d: %w", typ, err)
			}
		}
	}
	return nil, fmt.Errorf("wtns: no values section")
}

// publicValues reads the first 1+nPublic values of a values section of
// size bytes from r, once the header section is in f.
func publicValues(f *binFile, r io.Reader, size uint64, nPublic int) ([]string, error) {
	h, err := f.section(1, "header")
	if err != nil {
		return nil, fmt.Errorf("%w before the values (snarkjs writes it first)", err)
	}
	cc := h.field("field", false)
	n := h.u32()
	if err := h.done(); err != nil {
		return nil, err
	}
	if uint64(n) < uint64(nPublic)+1 || size != 32*uint64(n) {
		return nil, fmt.Errorf("wtns: %d values in %d bytes: not a witness with %d public signals", n, size, nPublic)
	}
	b := make([]byte, 32*(nPublic+1))
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("wtns: values section: %w", err)
	}
	f.sections[2] = b
	v, _ := f.section(2, "values")
	if one := cc.scalar(v, item{"value", 0}); v.err == nil && !cc.isOne(one) {
		return nil, fmt.Errorf("wtns: the first value (the one wire) is not 1")
	}
	pub := make([]proofdata.Scalar, nPublic)
	for i := range pub {
		if pub[i] = cc.scalar(v, item{"value", i + 1}); v.err != nil {
			return nil, v.err
		}
	}
	return cc.decimals(pub), v.err
}
