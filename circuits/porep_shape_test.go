package circuits_test

import (
	"runtime"
	"testing"
	"time"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	blscs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/mem"
)

// BenchmarkPorepShape measures porep's shape on BLS12-381 as
// notes/porep-shape.md gives it beside the real partition's: its
// constraints and wires, the share of private wires whose value is 0 or
// 1 (in a witness solved by gnark), the share of wires in A and in B
// (those with a point in the proving key), gnark's proving key in bytes
// (uncompressed: G1 A, B, K and Z, G2 B), the R1CS in memory and as
// written, and the direct build's and gnark's solve's time, wall and CPU
// (the process's). "challenge"
// is one challenge of the real shape (7.24M constraints): a partition is
// 18 of them and 568 constraints more.
//
//	go test -run '^$' -bench 'PorepShape/challenge' -benchtime 1x -timeout 1h ./circuits
func BenchmarkPorepShape(b *testing.B) {
	g, c := circuits.PorepRungCost(0)
	for _, s := range []struct {
		name string
		n    int
	}{{"2^18", 1 << 18}, {"2^20", 1 << 20}, {"challenge", g + c}} {
		b.Run(s.name, func(b *testing.B) {
			bi := porep(b)
			for range b.N {
				runtime.GC()
				cpu0, start := mem.ProcessCPU(), time.Now()
				ccs, err := bi.CompileOn(curve.BLS12_381, s.n)
				if err != nil {
					b.Fatal(err)
				}
				build, buildCPU := time.Since(start), mem.ProcessCPU()-cpu0
				r := ccs.(*blscs.R1CS)
				pub, sec := r.GetNbPublicVariables(), r.GetNbSecretVariables()
				wires := pub + sec + r.NbInternalVariables
				inA, inB := make([]bool, wires), make([]bool, wires)
				terms := 0
				it := r.GetR1CIterator()
				for c := it.Next(); c != nil; c = it.Next() {
					terms += len(c.L) + len(c.R) + len(c.O)
					for _, t := range c.L {
						inA[t.WireID()] = true
					}
					for _, t := range c.R {
						inB[t.WireID()] = true
					}
				}
				nA, nB := 0, 0
				for i := range wires {
					if inA[i] {
						nA++
					}
					if inB[i] {
						nB++
					}
				}
				w, err := bi.WitnessOn(curve.BLS12_381, s.n, 1)
				if err != nil {
					b.Fatal(err)
				}
				cpu0, start = mem.ProcessCPU(), time.Now()
				sol, err := ccs.Solve(w)
				if err != nil {
					b.Fatal(err)
				}
				solve, solveCPU := time.Since(start), mem.ProcessCPU()-cpu0
				W := sol.(*blscs.R1CSSolution).W
				bitsN := 0
				var one blsfr.Element
				one.SetOne()
				for i := pub; i < wires; i++ {
					if W[i].IsZero() || W[i].Equal(&one) {
						bitsN++
					}
				}
				domain := 1
				for domain < r.GetNbConstraints() {
					domain <<= 1
				}
				key := 96*(nA+nB+(wires-pub)+domain-1) + 192*nB
				var cw countingWriter
				if _, err := ccs.WriteTo(&cw); err != nil {
					b.Fatal(err)
				}
				mem := 4*len(r.CallData) + 24*len(r.Instructions) + 4*r.GetNbInstructions() + 48*len(r.Coefficients)
				priv := wires - pub
				b.ReportMetric(float64(r.GetNbConstraints()), "constraints")
				b.ReportMetric(float64(priv), "private-wires")
				b.ReportMetric(float64(bitsN)/float64(priv), "bit-share")
				b.ReportMetric(float64(nA)/float64(wires), "A-share")
				b.ReportMetric(float64(nB)/float64(wires), "B-share")
				b.ReportMetric(float64(key), "key-B")
				b.ReportMetric(float64(mem), "r1cs-mem-B")
				b.ReportMetric(float64(cw), "r1cs-file-B")
				b.ReportMetric(float64(terms)/float64(r.GetNbConstraints()), "terms/constraint")
				b.ReportMetric(build.Seconds(), "build-s")
				b.ReportMetric(buildCPU.Seconds(), "build-cpu-s")
				b.ReportMetric(solve.Seconds(), "gnark-solve-s")
				b.ReportMetric(solveCPU.Seconds(), "gnark-solve-cpu-s")
				b.ReportMetric(float64(nA), "A-wires")
				b.ReportMetric(float64(nB), "B-wires")
			}
		})
	}
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
