package gnarksrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"github.com/zkpipe/zkpipe/curve"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/circuits"
)

// chainShape is mulchain's witness: Y public, X secret (76 bytes).
var chainShape = witnessShape{circuit: "chain", curve: curve.BN254, public: 1, secret: 1}

// wideShape is a larger witness, so that a bound in bytes means something.
var wideShape = witnessShape{circuit: "wide", curve: curve.BN254, public: 3, secret: 100}

// allocBound is the most a witness read may allocate: the bytes and the
// vector (twice the witness), plus a little for the reader's goroutine,
// timer and errors.
func allocBound(w witnessShape) uint64 { return uint64(2*w.size()) + 16<<10 }

// allocated returns how many bytes f allocated.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

func goodWitness(t testing.TB) []byte {
	t.Helper()
	b, err := circuits.Lookup("mulchain")
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Witness(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != chainShape.size() {
		t.Fatalf("a mulchain witness is %d bytes, the reader expects %d", len(data), chainShape.size())
	}
	return data
}

func header(pub, secret, n uint32) []byte {
	h := make([]byte, 12)
	binary.BigEndian.PutUint32(h[0:], pub)
	binary.BigEndian.PutUint32(h[4:], secret)
	binary.BigEndian.PutUint32(h[8:], n)
	return h
}

// Each bad file fails fast with a message naming what is wrong, having
// allocated no more than a witness of the circuit needs.
func TestReadWitnessFileRefusesBadFilesFastAndSmall(t *testing.T) {
	dir := t.TempDir()
	good := goodWitness(t)
	rng := rand.New(rand.NewSource(1))
	random := func(n int) []byte { b := make([]byte, n); rng.Read(b); return b }
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sparse := func(name string, head []byte) string {
		p := file(name, head)
		if err := os.Truncate(p, 1<<30); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct{ name, path, want string }{
		{"good", file("good", good), ""},
		{"dev zero", "/dev/zero", "cannot be read with a deadline"},
		{"sparse 1 GiB", sparse("sparse", nil), "not a witness of circuit chain: its header does not give the 1 public and 1 secret values"},
		{"sparse 1 GiB, right header", sparse("sparse2", header(1, 1, 2)), "trailing bytes after the witness: 1073741824 bytes"},
		{"76 bytes, random header", file("r76", random(76)), "the 1 public and 1 secret values the circuit wants"},
		{"4 KiB, random header", file("r4k", random(4096)), "the 1 public and 1 secret values the circuit wants"},
		{"huge counts", file("huge", header(1<<31, 1<<31, 0xffffffff)), "not a witness of circuit chain: its header does not give"},
		{"counts disagree", file("disagree", append(header(1, 1, 3), good[12:]...)), "the witness header's element count is not its public and secret counts' sum"},
		{"header only", file("head", good[:12]), "truncated: 12 bytes"},
		{"short header", file("short", good[:7]), "truncated: 7 bytes"},
		{"truncated", file("trunc", good[:len(good)-1]), "truncated: 75 bytes, a witness of circuit chain is 76"},
		{"trailing", file("trail", append(append([]byte{}, good...), 0)), "trailing bytes after the witness: 77 bytes"},
		{"not in the field", file("big", append(append([]byte{}, good[:44]...), bytes.Repeat([]byte{0xff}, 32)...)), "malformed"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			t0 := time.Now()
			n := allocated(func() {
				_, err = readWitnessFile(context.Background(), tc.path, chainShape, boundedread.Options{Timeout: time.Second})
			})
			if el := time.Since(t0); el > 500*time.Millisecond {
				t.Errorf("took %v", el)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("a good witness: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if n > allocBound(chainShape) {
				t.Errorf("allocated %d bytes, more than %d", n, allocBound(chainShape))
			}
		})
	}
}

// FuzzReadWitness: whatever the bytes, the reader returns a witness of the
// circuit's shape or an error, and allocates no more than a witness of the
// circuit needs.
func FuzzReadWitness(f *testing.F) {
	good := goodWitness(f)
	f.Add(good)
	f.Add(good[:12])
	f.Add(good[:len(good)-5])
	f.Add(append(append([]byte{}, good...), 1, 2, 3))
	f.Add(header(0xffffffff, 0xffffffff, 0xffffffff))
	f.Add(header(1, 0xffffffff, 0))
	f.Add(append(header(3, 100, 103), make([]byte, 32*103)...))
	rng := rand.New(rand.NewSource(2))
	for range 4 {
		h := make([]byte, 12)
		rng.Read(h)
		f.Add(h)
		f.Add(append(h, make([]byte, 64)...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, shape := range []witnessShape{chainShape, wideShape} {
			for _, size := range []int64{int64(len(data)), -1} { // a file, a pipe
				var err error
				var nb int
				n := allocated(func() {
					w, e := readWitness(bytes.NewReader(data), size, shape)
					if err = e; w != nil {
						nb = len(w.Vector().(fr.Vector))
					}
				})
				if err == nil && (int64(len(data)) != shape.size() || nb != shape.public+shape.secret) {
					t.Fatalf("accepted %d bytes as a witness of %d values for %+v", len(data), nb, shape)
				}
				if n > allocBound(shape) {
					t.Fatalf("allocated %d bytes reading %d for %+v, bound %d", n, len(data), shape, allocBound(shape))
				}
			}
		}
	})
}

// A witness in hand (blob.Input) is read with the file's bounds: the good
// one is the witness, one with trailing bytes, a truncated one and another
// circuit's are refused naming the input, and each is released once read.
func TestWitnessInHandHasTheFilesBounds(t *testing.T) {
	good := goodWitness(t)
	in := blob.NewInput("witness object a@1.witness", good, nil)
	w, err := readWitnessInput(context.Background(), in, chainShape)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := w.MarshalBinary(); !bytes.Equal(b, good) {
		t.Errorf("read back %x, want %x", b, good)
	}
	for name, c := range map[string]struct {
		data  []byte
		shape witnessShape
		want  string
	}{
		"trailing":  {append(bytes.Clone(good), 0), chainShape, "trailing bytes"},
		"truncated": {good[:40], chainShape, "truncated"},
		"other":     {good, wideShape, "not a witness of circuit wide"},
	} {
		in := blob.NewInput("witness object "+name, c.data, nil)
		_, err := readWitnessInput(context.Background(), in, c.shape)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "witness object "+name) {
			t.Errorf("%s: %v, want %q naming the input", name, err, c.want)
		}
	}
	in.Release()
	if _, err := readWitnessInput(context.Background(), in, chainShape); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("a released input: %v", err)
	}
}
