package gnarksrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"

	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// A gnark binary witness (gnark v0.16.3, backend/witness.WriteTo), all
// big-endian:
//
//	nbPublic   uint32  public values, less the constant one wire
//	nbSecret   uint32
//	nbElements uint32  fr.Vector's length: nbPublic + nbSecret
//	nbElements × 32 bytes, each a canonical element of the curve's r
//
// Its size is therefore fixed by the circuit, and the reader checks the
// header against the circuit before it allocates a byte for the values.
// Nothing in it names the curve (BN254's and BLS12-381's Fr are both 32
// bytes): a value of r or more for the circuit's curve is refused, naming
// the curve (a BLS12-381 witness for a BN254 circuit, most likely); a
// witness of the smaller field fits the larger one and fails in
// synthesize, unsatisfied, the error naming the circuit's curve.
const witnessHeader = 12

// witnessShape is what a circuit wants of a witness.
type witnessShape struct {
	circuit        string
	curve          curve.ID
	public, secret int // public excludes the one wire
}

// size is the exact byte length of a witness of this shape.
func (w witnessShape) size() int64 {
	return witnessHeader + proofdata.ScalarBytes*int64(w.public+w.secret)
}

// readWitnessFile reads path as a witness of shape want, bounded by ctx and
// o's deadline (see package boundedread): a FIFO nobody writes to, a device
// or a stalled mount fails this job alone. Its errors name the path.
func readWitnessFile(ctx context.Context, path string, want witnessShape, o boundedread.Options) (witness.Witness, error) {
	return boundedread.Read(ctx, path, o, func(f *boundedread.File) (witness.Witness, error) {
		w, err := readWitness(f, f.Size(), want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return w, nil
	})
}

// readWitnessInput reads in, a witness file's bytes as a value (in hand,
// or fetched now under ctx), as a witness of shape want, with readWitness's
// bounds; its errors name in.
func readWitnessInput(ctx context.Context, in *blob.Input, want witnessShape) (witness.Witness, error) {
	r, size, err := in.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name(), err)
	}
	w, err := readWitness(r, size, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name(), err)
	}
	return w, nil
}

// readWitness reads one witness of shape want from r, whose size is known
// (a regular file's, ≥ 0) or not (-1: a pipe). It allocates at most about
// twice want.size(), whatever r holds: the header is checked first, a known
// size next, and then exactly want.size() bytes are read and one more is
// asked for, which must not come.
func readWitness(r io.Reader, size int64, want witnessShape) (witness.Witness, error) {
	expect := want.size()
	var head [witnessHeader]byte
	if n, err := io.ReadFull(r, head[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("malformed or truncated: %d bytes, not even the %d-byte header", n, witnessHeader)
		}
		return nil, err
	}
	nbPub := binary.BigEndian.Uint32(head[0:4])
	nbSecret := binary.BigEndian.Uint32(head[4:8])
	nbElems := binary.BigEndian.Uint32(head[8:12])
	if uint64(nbPub) != uint64(want.public) || uint64(nbSecret) != uint64(want.secret) {
		// what the circuit wants, never what the file says: an error line
		// must not carry a file's bytes (/etc/shadow read as integers)
		return nil, fmt.Errorf("not a witness of circuit %s: its header does not give the %d public and %d secret values the circuit wants",
			want.circuit, want.public, want.secret)
	}
	if uint64(nbElems) != uint64(nbPub)+uint64(nbSecret) {
		return nil, fmt.Errorf("malformed: the witness header's element count is not its public and secret counts' sum")
	}
	switch {
	case size >= 0 && size < expect:
		return nil, fmt.Errorf("truncated: %d bytes, a witness of circuit %s is %d", size, want.circuit, expect)
	case size > expect:
		return nil, fmt.Errorf("trailing bytes after the witness: %d bytes, a witness of circuit %s is %d", size, want.circuit, expect)
	}
	data := make([]byte, expect)
	copy(data, head[:])
	if n, err := io.ReadFull(r, data[witnessHeader:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("truncated: %d bytes, a witness of circuit %s is %d", witnessHeader+n, want.circuit, expect)
		}
		return nil, err
	}
	var one [1]byte
	if n, err := io.ReadFull(r, one[:]); n > 0 {
		return nil, fmt.Errorf("trailing bytes after the witness: more than the %d bytes of a witness of circuit %s", expect, want.circuit)
	} else if err != io.EOF {
		return nil, err
	}
	q := want.curve.ECC().ScalarField()
	for i := witnessHeader; i < len(data); i += proofdata.ScalarBytes {
		if new(big.Int).SetBytes(data[i:i+proofdata.ScalarBytes]).Cmp(q) >= 0 {
			return nil, fmt.Errorf("malformed: value %d is not below %s's scalar field modulus: not a witness of circuit %s, which is %s (a witness made for another curve?)",
				(i-witnessHeader)/proofdata.ScalarBytes, want.curve, want.circuit, want.curve)
		}
	}
	w, err := witness.New(q)
	if err != nil {
		return nil, err
	}
	if err := w.UnmarshalBinary(data); err != nil {
		return nil, fmt.Errorf("malformed: %w", err)
	}
	return w, nil
}

// maxPublicInputs bounds the public values ReadPublicInputs takes from a
// witness header before it has seen them: far more than any circuit's.
const maxPublicInputs = 1 << 22

// ReadPublicInputs reads the public values of the gnark binary witness at
// path (the one wire excluded), in decimal as a verified proof's public
// inputs are written: they come first, after the header, so only the
// header and those values are read. A regular file must be exactly as long
// as its header says. The read is bounded by ctx and o (boundedread); its
// errors name the path.
func ReadPublicInputs(ctx context.Context, path string, o boundedread.Options) ([]string, error) {
	return boundedread.Read(ctx, path, o, func(f *boundedread.File) ([]string, error) {
		in, err := ParsePublicInputs(f, f.Size())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return in, nil
	})
}

// ParsePublicInputs is ReadPublicInputs over r, whose size is known (≥ 0)
// or not (-1). It reads no more of r than the header and the public values.
// The witness names no curve: each value must be below the modulus of
// some curve's field (BLS12-381's r, the larger); ParsePublicInputsOf
// checks them against one curve's.
func ParsePublicInputs(r io.Reader, size int64) ([]string, error) {
	return parsePublicInputs(r, size, curve.BLS12_381.ECC().ScalarField(), "any curve's")
}

// ParsePublicInputsOf is ParsePublicInputs of a witness over id's field.
func ParsePublicInputsOf(id curve.ID, r io.Reader, size int64) ([]string, error) {
	return parsePublicInputs(r, size, id.ECC().ScalarField(), id.String()+"'s")
}

func parsePublicInputs(r io.Reader, size int64, modulus *big.Int, field string) ([]string, error) {
	const frBytes = proofdata.ScalarBytes
	var head [witnessHeader]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("not a gnark witness: no %d-byte header: %w", witnessHeader, err)
	}
	nbPub := binary.BigEndian.Uint32(head[0:4])
	nbSecret := binary.BigEndian.Uint32(head[4:8])
	nbElems := binary.BigEndian.Uint32(head[8:12])
	if uint64(nbElems) != uint64(nbPub)+uint64(nbSecret) || nbPub > maxPublicInputs {
		return nil, fmt.Errorf("not a gnark witness: its header's element count is not its public and secret counts' sum, or is absurd")
	}
	if want := witnessHeader + frBytes*int64(nbElems); size >= 0 && size != want {
		return nil, fmt.Errorf("%d bytes, not the length its header gives", size)
	}
	data := make([]byte, frBytes*int(nbPub))
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("truncated in its public values: %w", err)
	}
	out := make([]string, nbPub)
	for i := range out {
		v := new(big.Int).SetBytes(data[i*frBytes : (i+1)*frBytes])
		if v.Cmp(modulus) >= 0 {
			return nil, fmt.Errorf("public value %d: not below %s scalar field modulus", i, field)
		}
		out[i] = v.String()
	}
	return out, nil
}

// publicDecimals is the public witness w's values in decimal, as a
// verified proof's inputs are written (w of any curve).
func publicDecimals(w witness.Witness) ([]string, error) {
	data, err := w.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return ParsePublicInputs(bytes.NewReader(data), int64(len(data)))
}

// decimal is e in canonical decimal, 0 … q−1, as gnark's verifier and
// snarkjs read field elements. Not e.String(): gnark-crypto writes q−k as
// "-k" for k up to 65535 (a public input of −3, say).
func decimal[E interface{ BigInt(*big.Int) *big.Int }](e E) string {
	return e.BigInt(new(big.Int)).String()
}
