package fleet

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// witnessShape is what submit knows, from the store, of the witnesses a
// circuit takes, to refuse a file that is none before uploading it.
type witnessShape struct {
	circuit string
	circom  bool
	public  int // less the one wire
	// secret is the gnark circuit's secret count, -1 when only bounded:
	// by maxSecret, its proving key's size over 32 (the key holds a point
	// for each secret wire).
	secret    int
	maxSecret int64
	nVars     int // circom: the wires of a wtns
}

// shape reads circuit's witness shape from the store: the verifying key
// (public inputs; the zkey's header for circom's wire count) and, for
// gnark, circuit.json (the built-in's exact secret count) or the proving
// key's size.
func (k *storeKeys) shape(ctx context.Context, circuit string) (witnessShape, error) {
	ws := witnessShape{circuit: circuit, secret: -1}
	objs, err := circuitObjects(ctx, k.q, circuit)
	if err != nil {
		return ws, err
	}
	if len(objs) == 0 {
		return ws, fmt.Errorf("circuit %q: %w", circuit, ErrNoCircuit)
	}
	if why := incomplete(ctx, k.q, objs); why != "" {
		return ws, fmt.Errorf("circuit %s: %w: %s", circuit, ErrCircuitIncomplete, why)
	}
	v, err := k.get(ctx, circuit)
	if err != nil {
		return ws, err
	}
	if v.circom != nil {
		ws.circom, ws.public = true, v.circom.NPublic
		if ws.nVars, err = zkeyWires(ctx, k.q, circuit+"/"+zkeyObject); err != nil {
			return ws, err
		}
		return ws, nil
	}
	if ws.public, err = gnarksrc.NbPublicInputs(v.gnark); err != nil {
		return ws, err
	}
	if pk := objs[gnarksrc.PKFile]; pk != nil {
		ws.maxSecret = int64(pk.Size / 32)
	}
	if info := objs[gnarksrc.MetaFile]; info != nil && info.Size <= 64<<10 {
		if data, err := k.q.Circuits.GetBytes(ctx, info.Name); err == nil {
			var m gnarksrc.Meta
			if json.Unmarshal(data, &m) == nil {
				if b, err := circuits.Lookup(m.Builtin); err == nil {
					if sh := b.Shape(m.Constraints); sh.Public == ws.public {
						ws.secret = sh.Secret
					}
				}
			}
		}
	}
	return ws, nil
}

// zkeyWires reads the wire count from the Groth16 header section of the
// zkey obj in the store, reading only as far as that section (snarkjs
// writes it second, after a 4-byte header section).
func zkeyWires(ctx context.Context, q *Queue, obj string) (int, error) {
	r, err := q.getObject(ctx, CircuitBucket, obj)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	bad := fmt.Errorf("%w: %s: no Groth16 header where snarkjs writes it", errRejected, obj)
	var h [12]byte
	if _, err := io.ReadFull(r, h[:]); err != nil || string(h[:4]) != "zkey" {
		return 0, bad
	}
	for range min(binary.LittleEndian.Uint32(h[8:]), 4) {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return 0, bad
		}
		typ, n := binary.LittleEndian.Uint32(h[:]), binary.LittleEndian.Uint64(h[4:])
		if typ != 2 {
			if n > 4096 {
				return 0, bad
			}
			if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
				return 0, bad
			}
			continue
		}
		// n8q, q, n8r, r, nVars, nPublic
		var n8 [4]byte
		for range 2 {
			if _, err := io.ReadFull(r, n8[:]); err != nil {
				return 0, bad
			}
			l := binary.LittleEndian.Uint32(n8[:])
			if l > 64 {
				return 0, bad
			}
			if _, err := io.CopyN(io.Discard, r, int64(l)); err != nil {
				return 0, bad
			}
		}
		if _, err := io.ReadFull(r, n8[:]); err != nil {
			return 0, bad
		}
		return int(binary.LittleEndian.Uint32(n8[:])), nil
	}
	return 0, bad
}

// errNotAWitness marks a file submit refuses to upload. Its messages say
// what the circuit wants and the file's size, never what the file holds.
var errNotAWitness = errors.New("not a witness of its circuit")

// checkWitness reads the header of f (size bytes, ext ".witness" or
// ".wtns") and checks it and the size against ws. Only the header is read.
func checkWitness(f *os.File, size int64, ext string, ws witnessShape) error {
	switch {
	case ext == ".witness" && ws.circom:
		return fmt.Errorf("%w: circuit %s is a circom circuit, which takes a wtns, not a gnark witness", errNotAWitness, ws.circuit)
	case ext == ".wtns" && !ws.circom:
		return fmt.Errorf("%w: circuit %s is a gnark circuit, which takes a witness, not a wtns", errNotAWitness, ws.circuit)
	case ext == ".wtns":
		return checkWtns(f, size, ws)
	}
	const header = 12
	want := func() string {
		if ws.secret >= 0 {
			return fmt.Sprintf("a gnark witness of %d public and %d secret values, %d bytes", ws.public, ws.secret, header+32*int64(ws.public+ws.secret))
		}
		return fmt.Sprintf("a gnark witness of %d public values and at most %d secret ones", ws.public, ws.maxSecret)
	}
	var h [header]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return fmt.Errorf("%w: %d bytes, not even a witness header; circuit %s takes %s", errNotAWitness, size, ws.circuit, want())
	}
	pub, sec, n := binary.BigEndian.Uint32(h[0:]), binary.BigEndian.Uint32(h[4:]), binary.BigEndian.Uint32(h[8:])
	ok := uint64(n) == uint64(pub)+uint64(sec) && uint64(pub) == uint64(ws.public) &&
		(ws.secret < 0 && int64(sec) <= ws.maxSecret || ws.secret >= 0 && uint64(sec) == uint64(ws.secret)) &&
		size == header+32*int64(n)
	if !ok {
		return fmt.Errorf("%w: a file of %d bytes whose header does not match it; circuit %s takes %s", errNotAWitness, size, ws.circuit, want())
	}
	return nil
}

// wtnsSlack allows for sections a wtns reader skips, as workers do.
const wtnsSlack = 4096

// checkWtns checks a snarkjs wtns: its magic and version, the header
// section (32-byte elements of BN254's scalar field, the circuit's wire
// count) and the values section's size, reading only the headers.
func checkWtns(f *os.File, size int64, ws witnessShape) error {
	want := fmt.Sprintf("a wtns of %d wires over BN254's scalar field (%d bytes)", ws.nVars, wtnsBytes(ws.nVars))
	bad := func() error {
		return fmt.Errorf("%w: a file of %d bytes that is not %s; circuit %s takes one", errNotAWitness, size, want, ws.circuit)
	}
	if ws.nVars <= 0 || size > wtnsBytes(ws.nVars)+wtnsSlack {
		return bad()
	}
	r := io.NewSectionReader(f, 0, size)
	var h [12]byte
	if _, err := io.ReadFull(r, h[:]); err != nil || string(h[:4]) != "wtns" {
		return bad()
	}
	if v := binary.LittleEndian.Uint32(h[4:]); v == 0 || v > 2 {
		return bad()
	}
	sawHeader := false
	for range min(binary.LittleEndian.Uint32(h[8:]), 16) {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return bad()
		}
		typ, n := binary.LittleEndian.Uint32(h[:]), binary.LittleEndian.Uint64(h[4:])
		switch typ {
		case 1:
			if n != 4+32+4 {
				return bad()
			}
			var b [40]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return bad()
			}
			q := fr.Modulus().FillBytes(make([]byte, 32))
			slices.Reverse(q) // little-endian on the file
			if binary.LittleEndian.Uint32(b[:4]) != 32 || !bytes.Equal(b[4:36], q) || binary.LittleEndian.Uint32(b[36:]) != uint32(ws.nVars) {
				return bad()
			}
			sawHeader = true
		case 2:
			if !sawHeader || n != 32*uint64(ws.nVars) {
				return bad()
			}
			return nil
		default:
			if n > uint64(size) {
				return bad()
			}
			if _, err := r.Seek(int64(n), io.SeekCurrent); err != nil {
				return bad()
			}
		}
	}
	return bad()
}

func wtnsBytes(n int) int64 { return 12 + (12 + 4 + 32 + 4) + (12 + 32*int64(n)) }
