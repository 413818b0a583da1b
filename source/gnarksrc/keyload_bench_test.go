package gnarksrc_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// BenchmarkKeyLoad times loading a circuit directory's proving key in both
// of gnark's encodings, in one run:
//
//	zkpipe        the whole load (LoadDirWith, ReadKeyWhole: the r1cs and
//	              vk too, the layout checks, the key with readProvingKey,
//	              the checks of the files against each other)
//	zkpipe-streamed  LoadDir leaving the bases for later, then every
//	              base read as a GPU's load streams it, into no memory
//	zkpipe-reader the key alone with readProvingKey (point slices
//	              converted or decompressed over all cores)
//	gnark-…       the key alone with gnark's ReadFrom and UnsafeReadFrom
//	              (LoadDirWith's reader before readProvingKey)
//
// The key-alone readers read through a 1 MiB bufio.Reader, as LoadDirWith
// does (gnark-crypto's decoder reads 32 bytes at a time: straight from the
// file, a system call each). b.SetBytes is the key file's size, so each
// line's MB/s is the key's bytes a second, for zkpipe the whole load's too.
// The directory is ZKPIPE_BENCH_KEYS (a `zkpipe setup` output, raw keys,
// of either curve: the curve is circuit.json's); the compressed copy is
// written beside it, in ZKPIPE_BENCH_KEYS.compressed, once. Run with
// -benchtime=1x: each figure is one load of the whole key, as a user's
// start-up pays it. ZKPIPE_BENCH_ENCODINGS=raw: the raw key alone.
//
//	ZKPIPE_BENCH_KEYS=/tmp/c22 go test -run - -bench KeyLoad -benchtime=1x ./source/gnarksrc
func BenchmarkKeyLoad(b *testing.B) {
	dir := os.Getenv("ZKPIPE_BENCH_KEYS")
	if dir == "" {
		b.Skip("ZKPIPE_BENCH_KEYS names no circuit directory")
	}
	id := benchCurve(b, dir)
	encodings := []struct{ name, dir string }{{"raw", dir}}
	// ZKPIPE_BENCH_ENCODINGS=raw leaves the compressed copy out (its
	// writing reads and compresses the whole key, and at 2^27 the copy is
	// some 22 GiB more on the disk)
	if os.Getenv("ZKPIPE_BENCH_ENCODINGS") != "raw" {
		comp := filepath.Clean(dir) + ".compressed"
		if _, err := os.Stat(filepath.Join(comp, gnarksrc.PKFile)); err != nil {
			writeCompressed(b, id, dir, comp)
		}
		encodings = append(encodings, struct{ name, dir string }{"compressed", comp})
	}
	for _, enc := range encodings {
		pkPath := filepath.Join(enc.dir, gnarksrc.PKFile)
		st, err := os.Stat(pkPath)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(enc.name+"/zkpipe", func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				if _, err := gnarksrc.LoadDirWith(enc.dir, gnarksrc.Options{ReadKeyWhole: true}); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
		})
		// LoadDir as a GPU engine has it: the bases left for the load, then
		// streamed (every point read and converted, handed to a sink that
		// keeps none: the GPU's upload is not in it)
		b.Run(enc.name+"/zkpipe-streamed", func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				c, err := gnarksrc.LoadDir(enc.dir)
				if err == nil {
					err = c.Key.CheckDeferred()
				}
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
			}
		})
		for _, read := range []string{"zkpipe-reader", "gnark-ReadFrom", "gnark-UnsafeReadFrom"} {
			b.Run(enc.name+"/"+read, func(b *testing.B) {
				b.SetBytes(st.Size())
				for b.Loop() {
					f, err := os.Open(pkPath)
					if err != nil {
						b.Fatal(err)
					}
					r := bufio.NewReaderSize(f, 1<<20)
					pk := groth16.NewProvingKey(id.ECC())
					switch read {
					case "zkpipe-reader":
						_, err = gnarksrc.ReadProvingKey(id, pk, r)
					case "gnark-ReadFrom":
						_, err = pk.ReadFrom(r)
					default:
						_, err = pk.UnsafeReadFrom(r)
					}
					f.Close()
					if err != nil {
						b.Fatal(err)
					}
					runtime.GC()
				}
			})
		}
	}
}

// benchCurve is the curve circuit.json in dir names (BN254 when it names
// none: older zkpipes').
func benchCurve(b *testing.B, dir string) curve.ID {
	data, err := os.ReadFile(filepath.Join(dir, gnarksrc.MetaFile))
	if err != nil {
		b.Fatal(err)
	}
	var meta gnarksrc.Meta
	if err := json.Unmarshal(data, &meta); err != nil {
		b.Fatal(err)
	}
	if meta.Curve == "" {
		return curve.BN254
	}
	id, err := curve.Parse(meta.Curve)
	if err != nil {
		b.Fatal(err)
	}
	return id
}

// writeCompressed writes dir's proving key in gnark's default (compressed)
// encoding into comp, beside links to dir's other files.
func writeCompressed(b *testing.B, id curve.ID, dir, comp string) {
	t0 := time.Now()
	if err := os.MkdirAll(comp, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{gnarksrc.R1CSFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
		abs, _ := filepath.Abs(filepath.Join(dir, name))
		if _, err := os.Stat(abs); err == nil {
			os.Remove(filepath.Join(comp, name))
			if err := os.Symlink(abs, filepath.Join(comp, name)); err != nil {
				b.Fatal(err)
			}
		}
	}
	f, err := os.Open(filepath.Join(dir, gnarksrc.PKFile))
	if err != nil {
		b.Fatal(err)
	}
	pk := groth16.NewProvingKey(id.ECC())
	_, err = pk.UnsafeReadFrom(bufio.NewReaderSize(f, 1<<20))
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(filepath.Join(comp, gnarksrc.PKFile))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pk.WriteTo(out); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("compressed copy written in %v", time.Since(t0))
}
