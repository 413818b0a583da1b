package circuits_test

import (
	"bytes"
	"fmt"
	"math/big"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	blscs "github.com/consensys/gnark/constraint/bls12-381"
	bncs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"

	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
)

var bothCurves = []curve.ID{curve.BN254, curve.BLS12_381}

// directSizes are sizes around the edges of the built-ins: the minimum, odd
// sizes, sizes just off a word of bits (128 constraints), and words enough
// for bits' running count to be compressed (at 300 terms: every 5th word,
// then every 5th again from one term) once, twice and on the last word.
var directSizes = []int{4, 5, 7, 8, 63, 127, 128, 129, 255, 256, 257, 300, 383, 511, 640, 641, 767, 1001,
	1151, 1152, 1280, 1408, 2048, 2049, 4097, 128*19 + 5, 128*24 + 127}

// The direct build of mulchain and bits is, byte for byte, what gnark's
// frontend compiles of their Define on both curves, so keys and circuit
// directories made from either are the same.
func TestDirectIsTheFrontendsSystem(t *testing.T) {
	for _, name := range []string{"mulchain", "bits"} {
		b, err := circuits.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range bothCurves {
			for _, n := range directSizes {
				direct, err := b.CompileOn(id, n)
				if err != nil {
					t.Fatal(err)
				}
				gnark, err := circuits.CompileWithFrontend(b, id, n)
				if err != nil {
					t.Fatal(err)
				}
				if d, g := serialize(t, direct), serialize(t, gnark); !bytes.Equal(d, g) {
					t.Errorf("%s on %s at %d: the direct system's %d bytes differ from the frontend's %d: %s",
						name, id, n, len(d), len(g), firstDifference(direct, gnark))
				}
			}
		}
	}
}

func serialize(t *testing.T, cs constraint.ConstraintSystem) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := cs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// firstDifference names where two systems first differ, for a failure
// that says what to fix.
func firstDifference(a, b constraint.ConstraintSystem) string {
	if a.GetNbConstraints() != b.GetNbConstraints() || a.GetNbInternalVariables() != b.GetNbInternalVariables() ||
		a.GetNbPublicVariables() != b.GetNbPublicVariables() || a.GetNbSecretVariables() != b.GetNbSecretVariables() ||
		a.GetNbInstructions() != b.GetNbInstructions() || a.GetNbCoefficients() != b.GetNbCoefficients() {
		return fmt.Sprintf("counts (constraints, internal, public, secret, instructions, coefficients) %d %d %d %d %d %d against %d %d %d %d %d %d",
			a.GetNbConstraints(), a.GetNbInternalVariables(), a.GetNbPublicVariables(), a.GetNbSecretVariables(), a.GetNbInstructions(), a.GetNbCoefficients(),
			b.GetNbConstraints(), b.GetNbInternalVariables(), b.GetNbPublicVariables(), b.GetNbSecretVariables(), b.GetNbInstructions(), b.GetNbCoefficients())
	}
	for i := range a.GetNbInstructions() {
		ia, ib := a.GetInstruction(i), b.GetInstruction(i)
		if fmt.Sprint(ia) != fmt.Sprint(ib) {
			return fmt.Sprintf("instruction %d: %s against %s", i, brief(ia), brief(ib))
		}
	}
	for i := range a.GetNbCoefficients() {
		if a.GetCoefficient(i) != b.GetCoefficient(i) {
			return fmt.Sprintf("coefficient %d", i)
		}
	}
	return "same instructions and coefficients: the header, names, levels or blueprints"
}

// brief is an instruction's offsets and the start of its calldata.
func brief(in constraint.Instruction) string {
	data := in.Calldata
	if len(data) > 16 {
		return fmt.Sprintf("{constraint %d, wire %d, calldata %v …%d more}", in.ConstraintOffset, in.WireOffset, data[:16], len(data)-16)
	}
	return fmt.Sprintf("{constraint %d, wire %d, calldata %v}", in.ConstraintOffset, in.WireOffset, data)
}

// The direct build allocates gnark's slices once, at their final length:
// what it predicts is what it builds.
func TestDirectSystemIsPreSized(t *testing.T) {
	for _, name := range []string{"mulchain", "bits"} {
		b, _ := circuits.Lookup(name)
		for _, id := range bothCurves {
			for _, n := range directSizes {
				ccs, err := b.CompileOn(id, n)
				if err != nil {
					t.Fatal(err)
				}
				instr, calldata, levels, coeffs, ok := circuits.SizeOf(b, n)
				if !ok {
					t.Fatalf("%s has no direct build", name)
				}
				var sys *constraint.System
				var gotCoeffs, capCoeffs int
				switch c := ccs.(type) {
				case *bncs.R1CS:
					sys, gotCoeffs, capCoeffs = &c.System, len(c.Coefficients), cap(c.Coefficients)
				case *blscs.R1CS:
					sys, gotCoeffs, capCoeffs = &c.System, len(c.Coefficients), cap(c.Coefficients)
				default:
					t.Fatalf("%s on %s: a %T", name, id, ccs)
				}
				for _, s := range []struct {
					what                string
					predicted, got, cap int
				}{
					{"instructions", instr, len(sys.Instructions), cap(sys.Instructions)},
					{"calldata", calldata, len(sys.CallData), cap(sys.CallData)},
					{"levels", levels, len(sys.Levels), cap(sys.Levels)},
					{"coefficients", coeffs, gotCoeffs, capCoeffs},
				} {
					if s.predicted != s.got || s.cap != s.got {
						t.Errorf("%s on %s at %d: %s predicted %d, built %d (capacity %d)", name, id, n, s.what, s.predicted, s.got, s.cap)
					}
				}
			}
		}
	}
}

// The direct systems prove with gnark's own setup, prover and verifier
// for the built-ins' witnesses, and a witness that breaks the public
// output does not solve.
func TestDirectSystemProves(t *testing.T) {
	for _, name := range []string{"mulchain", "bits"} {
		b, _ := circuits.Lookup(name)
		for _, id := range bothCurves {
			const n = 700
			ccs, err := b.CompileOn(id, n)
			if err != nil {
				t.Fatal(err)
			}
			pk, vk, err := groth16.Setup(ccs)
			if err != nil {
				t.Fatal(err)
			}
			w, err := b.WitnessOn(id, n, 3)
			if err != nil {
				t.Fatal(err)
			}
			proof, err := groth16.Prove(ccs, pk, w)
			if err != nil {
				t.Fatalf("%s on %s: %v", name, id, err)
			}
			pub, err := w.Public()
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, vk, pub); err != nil {
				t.Errorf("%s on %s: %v", name, id, err)
			}

			bad := b.AssignmentOn(id, n, 3)
			switch c := bad.(type) {
			case *circuits.MulChain:
				c.Y = new(big.Int).Add(c.Y.(*big.Int), big.NewInt(1))
			case *circuits.Bits:
				c.Count = c.Count.(int) + 1
			}
			bw, err := frontend.NewWitness(bad, id.ECC().ScalarField())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ccs.Solve(bw); err == nil {
				t.Errorf("%s on %s: a witness with its public output off by one solves", name, id)
			}
		}
	}
}

// BenchmarkCompile: the built-ins' R1CS through gnark's frontend against the
// direct build, with the peak of the live heap while building (sampled).
//
//	go test -run '^$' -bench Compile -benchtime 1x ./circuits
func BenchmarkCompile(b *testing.B) {
	for _, name := range []string{"mulchain", "bits"} {
		bi, _ := circuits.Lookup(name)
		for _, lg := range []int{18, 20} {
			for _, way := range []struct {
				name    string
				compile func(id curve.ID, n int) (constraint.ConstraintSystem, error)
			}{
				{"frontend", func(id curve.ID, n int) (constraint.ConstraintSystem, error) {
					return circuits.CompileWithFrontend(bi, id, n)
				}},
				{"direct", bi.CompileOn},
			} {
				b.Run(fmt.Sprintf("%s/2^%d/%s", name, lg, way.name), func(b *testing.B) {
					b.ReportAllocs()
					var peak int64
					for i := 0; i < b.N; i++ {
						runtime.GC()
						stop := samplePeakHeap()
						if _, err := way.compile(curve.BN254, 1<<lg); err != nil {
							b.Fatal(err)
						}
						peak = max(peak, stop())
					}
					b.ReportMetric(float64(peak), "peak-heap-B")
				})
			}
		}
	}
}

// samplePeakHeap samples the live heap every millisecond until the
// returned func is called, which gives the largest sample less the heap
// at the start.
func samplePeakHeap() func() int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base := read()
	var peak int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		return max(peak, read()) - base
	}
}
