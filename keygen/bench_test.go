package keygen_test

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
)

// The benchmark's sizes, circuits and curves, and whether gnark's
// groth16.Setup runs beside keygen's (its 2^22 takes 178 s on 16 cores:
// leave it off above that). bench/keygen-setup.sh passes these on the H200.
var (
	benchLogs     = flag.String("keygen.logs", "12,14,16", "log2 of the constraint counts to set up")
	benchCircuits = flag.String("keygen.circuits", "bits,mulchain", "built-in circuits to set up")
	benchCurves   = flag.String("keygen.curves", "bn254", "curves to set up on")
	benchGnark    = flag.Bool("keygen.gnark", true, "also time gnark's groth16.Setup")
)

// BenchmarkSetup times keygen.Setup, and gnark's groth16.Setup on the same
// compiled circuit, per circuit, curve and size (compilation untimed):
// compare the ns/op of .../keygen and .../gnark. Peak memory is
// bench/keygen-setup.sh's (/usr/bin/time -v of zkpipe setup).
func BenchmarkSetup(b *testing.B) {
	for _, cv := range strings.Split(*benchCurves, ",") {
		id, err := curve.Parse(cv)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range strings.Split(*benchCircuits, ",") {
			bi, err := circuits.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			for _, l := range strings.Split(*benchLogs, ",") {
				lg, err := strconv.Atoi(l)
				if err != nil {
					b.Fatalf("-keygen.logs: %v", err)
				}
				ccs, err := bi.CompileOn(id, 1<<lg)
				if err != nil {
					b.Fatal(err)
				}
				setups := []struct {
					name string
					run  func() error
				}{{"keygen", func() error { _, _, err := keygen.Setup(ccs); return err }}}
				if *benchGnark {
					setups = append(setups, struct {
						name string
						run  func() error
					}{"gnark", func() error { _, _, err := groth16.Setup(ccs); return err }})
				}
				for _, s := range setups {
					b.Run(fmt.Sprintf("%s/%s/2^%d/%s", id, name, lg, s.name), func(b *testing.B) {
						runtime.GC()
						for b.Loop() {
							if err := s.run(); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}

// BenchmarkWriteRawProvingKey times writing a bits key of 2^(-keygen.logs'
// first) constraints to a file (as zkpipe setup does, less its sync): gnark's pk.WriteRawTo (one core)
// against keygen.WriteRawProvingKey (the same bytes, over all cores).
func BenchmarkWriteRawProvingKey(b *testing.B) {
	lg, err := strconv.Atoi(strings.Split(*benchLogs, ",")[0])
	if err != nil {
		b.Fatalf("-keygen.logs: %v", err)
	}
	for _, cv := range strings.Split(*benchCurves, ",") {
		id, err := curve.Parse(cv)
		if err != nil {
			b.Fatal(err)
		}
		bi, _ := circuits.Lookup("bits")
		ccs, err := bi.CompileOn(id, 1<<lg)
		if err != nil {
			b.Fatal(err)
		}
		pk, _, err := keygen.Setup(ccs)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range []struct {
			name  string
			write func(io.Writer) (int64, error)
		}{
			{"gnark", pk.WriteRawTo},
			{"keygen", func(w io.Writer) (int64, error) { return keygen.WriteRawProvingKey(w, pk) }},
		} {
			b.Run(fmt.Sprintf("%s/bits/2^%d/%s", id, lg, w.name), func(b *testing.B) {
				f, err := os.Create(filepath.Join(b.TempDir(), "pk"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				for b.Loop() {
					if _, err := f.Seek(0, io.SeekStart); err != nil {
						b.Fatal(err)
					}
					bw := bufio.NewWriterSize(f, 1<<20) // blob.Dir.WriteStream's
					n, err := w.write(bw)
					if err == nil {
						err = bw.Flush()
					}
					if err != nil {
						b.Fatal(err)
					}
					b.SetBytes(n)
				}
			})
		}
	}
}
