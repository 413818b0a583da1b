package solve_test

import (
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/source/gnarksrc/solve"
)

// TestSolveMatchesGnarkInReusedBuffers solves built-in circuits with gnark's
// ccs.Solve and with Solve into buffers that hold garbage (as pooled ones
// do after another proof), and wants the same W, a, b, c; an unsatisfied
// witness is an error.
func TestSolveMatchesGnarkInReusedBuffers(t *testing.T) {
	for _, name := range []string{"mulchain", "bits"} {
		t.Run(name, func(t *testing.T) {
			b, err := circuits.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			const n = 1 << 10
			ccsI, err := b.Compile(n)
			if err != nil {
				t.Fatal(err)
			}
			sys := ccsI.(*cs.R1CS)
			wires, m := solve.Lengths(sys)
			garbage := func(k int) []fr.Element {
				v := make([]fr.Element, k)
				for i := range v {
					v[i].SetUint64(uint64(i*7 + 3))
				}
				return v
			}
			bufs := solve.Buffers{W: garbage(wires), Solved: make([]bool, wires), A: garbage(m), B: garbage(m), C: garbage(m)}
			for i := range bufs.Solved {
				bufs.Solved[i] = true // an earlier solve's flags: every wire "solved"
			}
			for seed := range int64(2) {
				w, err := b.Witness(n, seed)
				if err != nil {
					t.Fatal(err)
				}
				sol, err := sys.Solve(w)
				if err != nil {
					t.Fatal(err)
				}
				want := sol.(*cs.R1CSSolution)
				if err := solve.Solve(sys, w.Vector().(fr.Vector), bufs); err != nil {
					t.Fatal(err)
				}
				for _, v := range []struct {
					name      string
					got, want []fr.Element
				}{{"W", bufs.W, want.W}, {"a", bufs.A, want.A}, {"b", bufs.B, want.B}, {"c", bufs.C, want.C}} {
					if len(v.got) != len(v.want) {
						t.Fatalf("seed %d: %s has %d elements, gnark's %d", seed, v.name, len(v.got), len(v.want))
					}
					for i := range v.want {
						if !v.got[i].Equal(&v.want[i]) {
							t.Fatalf("seed %d: %s[%d] = %s, gnark's %s", seed, v.name, i, v.got[i].String(), v.want[i].String())
						}
					}
				}
			}

			// a wrong public value leaves a constraint unsatisfied
			w, _ := b.Witness(n, 1)
			vec := w.Vector().(fr.Vector)
			vec[0].SetUint64(12345)
			if err := solve.Solve(sys, vec, bufs); err == nil || !strings.Contains(err.Error(), "not satisfied") {
				t.Fatalf("unsatisfied witness: got %v", err)
			}
			// buffers of the wrong size are refused before anything is written
			short := bufs
			short.A = short.A[:m-1]
			if err := solve.Solve(sys, vec, short); err == nil || !strings.Contains(err.Error(), "solver buffers") {
				t.Fatalf("short buffers: got %v", err)
			}
		})
	}
}
