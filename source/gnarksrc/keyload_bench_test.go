package gnarksrc_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// BenchmarkKeyLoad times loading a circuit directory's proving key in both
// of gnark's encodings, zkpipe's load (LoadDirWith: the layout checks, then
// gnark's UnsafeReadFrom) against gnark's own ReadFrom and UnsafeReadFrom,
// in one run. The directory is ZKPIPE_BENCH_KEYS (a `zkpipe setup` output,
// raw keys); the compressed copy is written beside it, in
// ZKPIPE_BENCH_KEYS.compressed, once. Run with -benchtime=1x: each figure is
// one load of the whole key, as a user's start-up pays it.
//
//	ZKPIPE_BENCH_KEYS=/tmp/c22 go test -run - -bench KeyLoad -benchtime=1x ./source/gnarksrc
func BenchmarkKeyLoad(b *testing.B) {
	dir := os.Getenv("ZKPIPE_BENCH_KEYS")
	if dir == "" {
		b.Skip("ZKPIPE_BENCH_KEYS names no circuit directory")
	}
	comp := filepath.Clean(dir) + ".compressed"
	if _, err := os.Stat(filepath.Join(comp, gnarksrc.PKFile)); err != nil {
		writeCompressed(b, dir, comp)
	}
	for _, enc := range []struct{ name, dir string }{{"raw", dir}, {"compressed", comp}} {
		pkPath := filepath.Join(enc.dir, gnarksrc.PKFile)
		st, err := os.Stat(pkPath)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(enc.name+"/zkpipe", func(b *testing.B) {
			for b.Loop() {
				if _, err := gnarksrc.LoadDir(enc.dir); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
		})
		for _, read := range []string{"ReadFrom", "UnsafeReadFrom"} {
			b.Run(enc.name+"/gnark-"+read, func(b *testing.B) {
				for b.Loop() {
					f, err := os.Open(pkPath)
					if err != nil {
						b.Fatal(err)
					}
					pk := groth16.NewProvingKey(ecc.BN254)
					if read == "ReadFrom" {
						_, err = pk.ReadFrom(f)
					} else {
						_, err = pk.UnsafeReadFrom(f)
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

// writeCompressed writes dir's proving key in gnark's default (compressed)
// encoding into comp, beside links to dir's other files.
func writeCompressed(b *testing.B, dir, comp string) {
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
	pk := groth16.NewProvingKey(ecc.BN254)
	_, err = pk.UnsafeReadFrom(f)
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
