package gnarksrc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
)

// hintsAndCommit has public inputs, hints (ToBinary), a commitment and a
// log line: every part of gnark's System's body.
type hintsAndCommit struct {
	X frontend.Variable `gnark:",public"`
	S [4]frontend.Variable
}

func (c *hintsAndCommit) Define(api frontend.API) error {
	acc := c.X
	for _, s := range c.S {
		acc = api.Add(api.Mul(acc, s), s)
	}
	bits := api.ToBinary(acc, api.Compiler().FieldBitLen())
	cm, err := api.(frontend.Committer).Commit(bits[0], bits[1], c.S[0])
	if err != nil {
		return err
	}
	api.Println("acc", acc)
	api.AssertIsDifferent(api.Add(cm, 1), 0)
	return nil
}

// r1csCases are systems of every kind, at sizes that fill intcomp's
// blocks of 128 and leave them part full, serialised as gnark writes them.
func r1csCases(t testing.TB, id curve.ID) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	add := func(name string, ccs constraint.ConstraintSystem) {
		var b bytes.Buffer
		if _, err := ccs.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	for _, name := range []string{"mulchain", "bits", "commit"} {
		b, err := circuits.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{circuits.MinConstraints, 129, 1000, 5001} {
			ccs, err := b.CompileOn(id, n)
			if err != nil {
				t.Fatal(err)
			}
			add(fmt.Sprintf("%s-%d", name, n), ccs)
		}
	}
	ccs, err := frontend.Compile(id.ECC().ScalarField(), r1cs.NewBuilder, &hintsAndCommit{})
	if err != nil {
		t.Fatal(err)
	}
	add("hints-and-commit", ccs)
	return out
}

// readR1CS decodes every system gnark's ReadFrom decodes into the same
// value (reflect.DeepEqual of the typed R1CS: levels, instructions,
// calldata, coefficients, the body's blueprints, names, hints, logs and
// commitments), on both curves, with the calldata cut into pieces of 7
// bytes (most of its cuts inside a uvarint) or one piece, on 1, 3 and all
// cores.
func TestR1CSReadsAsGnarks(t *testing.T) {
	defer func(p int) { calldataPiece = p }(calldataPiece)
	for _, id := range curve.All {
		for name, data := range r1csCases(t, id) {
			want := groth16.NewCS(id.ECC())
			if _, err := want.ReadFrom(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			for _, piece := range []int{7, 4 << 20} {
				for _, procs := range []int{1, 3, runtime.NumCPU()} {
					calldataPiece = piece
					old := runtime.GOMAXPROCS(procs)
					var read atomic.Int64
					got, err := readR1CS(bytes.NewReader(data), int64(len(data)), id, &read)
					runtime.GOMAXPROCS(old)
					if err != nil {
						t.Fatalf("%s/%s: %v", id, name, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s/%s, calldata pieces of %d bytes, %d cores: not the system gnark's ReadFrom decodes", id, name, piece, procs)
					}
					if r := read.Load(); r != int64(len(data))-r1csHeaderLen {
						t.Fatalf("%s/%s: counted %d bytes read of %d", id, name, r, len(data))
					}
				}
			}
		}
	}
}

// A file of another shape than gnark's is refused with an error that says
// where, never a panic or a loop, whatever part is off: the header, a
// count, a compressed block's header (intcomp's decoder would loop on a
// block of no words), the calldata's values, the coefficients, the body.
func TestR1CSCorruptionsFail(t *testing.T) {
	defer func(p int) { calldataPiece = p }(calldataPiece)
	calldataPiece = 64
	id := curve.BN254
	data := r1csCases(t, id)["commit-1000"]
	s, err := parseR1CSHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	u64 := func(b []byte, at int64, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }
	u32 := func(b []byte, at int64, v uint32) { binary.LittleEndian.PutUint32(b[at:], v) }
	lv, in, cd, bd, co := s.levels[0], s.instructions[0], s.calldata[0], s.body[0], s.coeffs[0]
	// the first level's words, and its first block's header
	firstLevelWords := int64(binary.LittleEndian.Uint64(data[lv+8:]))
	if firstLevelWords < 3 {
		t.Fatalf("the first level has %d words: no block to break", firstLevelWords)
	}
	for _, c := range []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"total length", func(b []byte) []byte { u64(b, 0, uint64(len(b))); return b }, "its header says"},
		{"version", func(b []byte) []byte { u64(b, 8, 1); return b }, "written by gnark 1."},
		{"a section past the end", func(b []byte) []byte { u64(b, 32+24, uint64(len(b))); return b }, "its sections say more"},
		{"levels count", func(b []byte) []byte { u64(b, lv, 1<<40); return b }, "its levels: 1099511627776 levels"},
		{"a level's words", func(b []byte) []byte { u64(b, lv+8, 1<<40); return b }, "its levels: level 0 of"},
		{"a block of no words", func(b []byte) []byte { u32(b, lv+16+4, 0); return b }, "a compressed block of"},
		{"a block of too many values", func(b []byte) []byte { u32(b, lv+16, 1<<30); return b }, "a compressed block of 1073741824 values"},
		{"instructions' lengths", func(b []byte) []byte {
			u32(b, in+8, binary.LittleEndian.Uint32(b[in+8:])-1) // the first array's first block: a value less
			return b
		}, "array 1 of 4 holds"},
		{"calldata count", func(b []byte) []byte {
			u64(b, cd, binary.LittleEndian.Uint64(b[cd:])+1)
			return b
		}, "its calldata: its count is"},
		{"calldata cut short", func(b []byte) []byte { b[bd-1] = 0x80; return b }, "its last value is cut short"},
		{"calldata value of 11 bytes", func(b []byte) []byte {
			for i := cd + 8; i < cd+8+11; i++ {
				b[i] = 0xff
			}
			b[cd+8+10] = 0x01
			return b
		}, "its calldata"},
		{"coefficient count", func(b []byte) []byte { u64(b, co, 1<<50); return b }, "its coefficient table says"},
		{"coefficients cut", func(b []byte) []byte {
			b = b[:len(b)-8]
			u64(b, 0, uint64(len(b)-32))
			return b
		}, "its coefficient table says"},
		{"body", func(b []byte) []byte {
			for i := bd; i < bd+16; i++ {
				b[i] = 0xff
			}
			return b
		}, "its body"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.edit(bytes.Clone(data))
			var read atomic.Int64
			_, err := readR1CS(bytes.NewReader(b), int64(len(b)), id, &read)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	// a file shorter than its size says: the read fails
	var read atomic.Int64
	if _, err := readR1CS(bytes.NewReader(data[:len(data)-100]), int64(len(data)), id, &read); err == nil {
		t.Fatal("read a truncated file")
	}
}

// LoadDir reads circuit.r1cs with readR1CS (the system gnark's ReadFrom
// decodes), and a directory whose r1cs has a malformed calldata is
// refused naming the file and the section.
func TestLoadDirReadsR1CSInParallel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chain")
	if _, err := Setup("mulchain", 300, dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, R1CSFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadDirWith(dir, Options{ReadKeyWhole: true})
	if err != nil {
		t.Fatal(err)
	}
	want := groth16.NewCS(curve.BN254.ECC())
	if _, err := want.ReadFrom(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Source.(*Source).R1CS(), want) {
		t.Fatal("LoadDir's system is not gnark's ReadFrom's")
	}
	s, err := parseR1CSHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(data)
	bad[s.body[0]-1] = 0x80
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "calldata") {
		t.Fatalf("LoadDir of a malformed r1cs: %v", err)
	}
}

// The sizes, circuits and curves BenchmarkR1CSLoad decodes.
var (
	r1csBenchLogs     = flag.String("r1cs.logs", "16", "log2 of the constraint counts of the r1cs files to load")
	r1csBenchCircuits = flag.String("r1cs.circuits", "bits,mulchain", "built-in circuits to load")
	r1csBenchCurves   = flag.String("r1cs.curves", "bn254", "curves of the circuits")
)

// BenchmarkR1CSLoad times decoding a circuit.r1cs from a file (a fresh
// one in the test's temporary directory, so most likely in the page
// cache): gnark's ReadFrom through LoadDir's 1 MiB buffer (.../gnark)
// against readR1CS over all cores (.../zkpipe). MB/s is the file's; s/Mc
// the seconds a 2^20 constraints. On the GPU host (16 cores):
//
//	go test -c -o gnarksrc.test ./source/gnarksrc
//	./gnarksrc.test -test.run '^$' -test.bench R1CSLoad -test.benchtime 3x -r1cs.logs 22,24,26 -r1cs.curves bls12-381
func BenchmarkR1CSLoad(b *testing.B) {
	for _, cv := range strings.Split(*r1csBenchCurves, ",") {
		id, err := curve.Parse(cv)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range strings.Split(*r1csBenchCircuits, ",") {
			bi, err := circuits.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			for _, l := range strings.Split(*r1csBenchLogs, ",") {
				lg, err := strconv.Atoi(l)
				if err != nil {
					b.Fatalf("-r1cs.logs: %v", err)
				}
				ccs, err := bi.CompileOn(id, 1<<lg)
				if err != nil {
					b.Fatal(err)
				}
				path := filepath.Join(b.TempDir(), R1CSFile)
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ccs.WriteTo(f); err != nil {
					b.Fatal(err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				mc := float64(ccs.GetNbConstraints()) / (1 << 20)
				ccs = nil
				for _, reader := range []string{"gnark", "zkpipe"} {
					b.Run(fmt.Sprintf("%s/%s/2^%d/%s", id, name, lg, reader), func(b *testing.B) {
						b.SetBytes(st.Size())
						runtime.GC()
						for b.Loop() {
							f, err := os.Open(path)
							if err != nil {
								b.Fatal(err)
							}
							if reader == "gnark" {
								_, err = groth16.NewCS(id.ECC()).ReadFrom(bufio.NewReaderSize(f, 1<<20))
							} else {
								var read atomic.Int64
								_, err = readR1CS(f, st.Size(), id, &read)
							}
							f.Close()
							if err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/mc, "s/Mc")
					})
				}
			}
		}
	}
}

// WriteR1CS writes the bytes gnark's WriteTo writes, for every kind of
// system on both curves, on 1, 3 and all cores, its calldata in batches
// of 7 values or one, and a system read back by readR1CS writes them
// again.
func TestWriteR1CSIsGnarks(t *testing.T) {
	defer func(b int) { calldataBatch = b }(calldataBatch)
	for _, id := range curve.All {
		for name, want := range r1csCases(t, id) {
			ccs := groth16.NewCS(id.ECC())
			if _, err := ccs.ReadFrom(bytes.NewReader(want)); err != nil {
				t.Fatal(err)
			}
			var read atomic.Int64
			back, err := readR1CS(bytes.NewReader(want), int64(len(want)), id, &read)
			if err != nil {
				t.Fatal(err)
			}
			for _, sys := range []constraint.ConstraintSystem{ccs, back} {
				for k, procs := range []int{1, 3, runtime.NumCPU()} {
					calldataBatch = []int{7, 4 << 20, 7}[k]
					old := runtime.GOMAXPROCS(procs)
					var got bytes.Buffer
					n, err := WriteR1CS(&got, sys)
					runtime.GOMAXPROCS(old)
					if err != nil {
						t.Fatalf("%s/%s: %v", id, name, err)
					}
					if n != int64(got.Len()) || !bytes.Equal(got.Bytes(), want) {
						t.Fatalf("%s/%s, %d cores: wrote %d bytes (said %d), gnark's WriteTo %d; equal: %v", id, name, procs, got.Len(), n, len(want), bytes.Equal(got.Bytes(), want))
					}
				}
			}
		}
	}
	if _, err := WriteR1CS(io.Discard, nil); err == nil {
		t.Fatal("wrote no system")
	}
	// a write that fails ends it with that error, in any section
	data := r1csCases(t, curve.BN254)["commit-1000"]
	ccs := groth16.NewCS(curve.BN254.ECC())
	if _, err := ccs.ReadFrom(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	s, err := parseR1CSHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	calldataBatch = 7
	for _, at := range []int64{0, 40, s.levels[0] + 3, s.instructions[0] + 3, s.calldata[0] + 100, s.body[0] + 1, s.coeffs[0] + 9, int64(len(data)) - 1} {
		w := &failAfter{left: at}
		if n, err := WriteR1CS(w, ccs); err != errDiskFull || n > at {
			t.Fatalf("failing at byte %d: wrote %d, %v", at, n, err)
		}
	}
}

var errDiskFull = fmt.Errorf("disk full")

// failAfter takes left bytes, then fails with errDiskFull.
type failAfter struct{ left int64 }

func (w *failAfter) Write(p []byte) (int, error) {
	if int64(len(p)) > w.left {
		n := w.left
		w.left = 0
		return int(n), errDiskFull
	}
	w.left -= int64(len(p))
	return len(p), nil
}
