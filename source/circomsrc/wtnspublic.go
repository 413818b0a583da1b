package circomsrc

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/proofdata"
)

// ReadWtnsPublic reads the public signals of the snarkjs witness at path:
// wires 1 … nPublic (wire 0 is the one wire, which must be 1), in decimal
// as a verified proof's public inputs are written. nPublic comes from the
// verifying key, which the wtns does not name. Only the header section and
// the first 1+nPublic values are read, so a witness of millions of wires
// costs a few kilobytes, each section read only once its size is what its
// header says (binFile). The read is bounded by ctx and o (boundedread);
// its errors name the path. A regular file's section table is checked
// against its size first (checkBinTable): a wtns with trailing bytes, or a
// section past its end, is refused here as the prover refuses it.
func ReadWtnsPublic(ctx context.Context, path string, nPublic int, o boundedread.Options) ([]string, error) {
	return boundedread.Read(ctx, path, o, func(f *boundedread.File) ([]string, error) {
		var bf *binFile
		var err error
		if f.Size() >= 0 {
			bf, err = fileBinFile(f, "wtns", 2)
		} else {
			bf, err = streamBinFile(f, "wtns", 2, math.MaxInt64, types(1))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		in, err := wtnsPublic(bf, nPublic)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return in, nil
	})
}

// ParseWtnsPublic is ReadWtnsPublic over r, a stream: it reads r up to
// the last public value, passing over the sections before them unread.
func ParseWtnsPublic(r io.Reader, nPublic int) ([]string, error) {
	bf, err := streamBinFile(r, "wtns", 2, math.MaxInt64, types(1))
	if err != nil {
		return nil, err
	}
	return wtnsPublic(bf, nPublic)
}

// wtnsPublic reads the header and the first 1+nPublic values of f.
func wtnsPublic(f *binFile, nPublic int) ([]string, error) {
	if nPublic < 0 || nPublic > 1<<30 {
		return nil, fmt.Errorf("wtns: %d public signals is absurd", nPublic)
	}
	cc, n, err := wtnsHeader(f)
	if err != nil {
		return nil, err
	}
	if uint64(n) < uint64(nPublic)+1 {
		return nil, fmt.Errorf("wtns: %d values: not a witness with %d public signals", n, nPublic)
	}
	v, err := f.prefix(2, "values", wtnsValues(n), 32*(nPublic+1))
	if err != nil {
		return nil, err
	}
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
