package circuits_test

import (
	"bytes"
	"crypto/sha256"
	"math/big"
	"math/rand"
	"strings"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"

	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
)

func porep(t testing.TB) circuits.Builtin {
	t.Helper()
	b, err := circuits.Lookup("porep")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rungSize is the size at which porep is one challenge of a rung.
func rungSize(rung int) int {
	g, c := circuits.PorepRungCost(rung)
	return g + c
}

// porep's direct build is, byte for byte, gnark's compile of its Define:
// at its smallest, two challenges replicated, reduced rounds, a full
// SHA-256 and Poseidon (rung 7), and more challenges than porep's plan
// gives a small rung (each copy's wires moved on the right blocks).
func TestPorepDirectIsTheFrontendsSystem(t *testing.T) {
	b := porep(t)
	last := circuits.PorepRungs() - 1
	for _, id := range bothCurves {
		for _, n := range []int{b.Min(), b.Min() + 1, 4096, 1<<14 + 3, rungSize(7)} {
			direct, err := b.CompileOn(id, n)
			if err != nil {
				t.Fatal(err)
			}
			gnark, err := circuits.CompileWithFrontend(b, id, n)
			if err != nil {
				t.Fatal(err)
			}
			sameSystem(t, "porep at "+itoa(n)+" on "+id.String(), direct, gnark)
		}
		for _, rc := range []struct{ rung, k int }{{last, 3}, {last - 3, 2}} {
			direct, err := circuits.PorepBuild(id, rc.rung, rc.k)
			if err != nil {
				t.Fatal(err)
			}
			gnark, err := circuits.PorepCompile(id, rc.rung, rc.k)
			if err != nil {
				t.Fatal(err)
			}
			sameSystem(t, "porep rung "+itoa(rc.rung)+" × "+itoa(rc.k)+" on "+id.String(), direct, gnark)
		}
	}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

func sameSystem(t *testing.T, what string, direct, gnark constraint.ConstraintSystem) {
	t.Helper()
	if d, g := serialize(t, direct), serialize(t, gnark); !bytes.Equal(d, g) {
		t.Errorf("%s: the direct system's %d bytes differ from the frontend's %d: %s", what, len(d), len(g), firstDifference(direct, gnark))
	}
}

// A witness drawn from a seed satisfies porep on both curves, its public
// inputs following from its secrets (another seed, other roots), and
// each kind of tampering leaves a constraint unsatisfied: a root, a
// sibling, the data leaf, a parent's label, the challenged node. (Below
// 16 rounds a SHA-256 compression reads only its first message words: a
// sibling in D is then bound by its bits' decomposition alone.)
func TestPorepWitnessSatisfies(t *testing.T) {
	b := porep(t)
	for _, id := range bothCurves {
		for _, n := range []int{b.Min(), 4096, rungSize(7)} {
			ccs, err := b.CompileOn(id, n)
			if err != nil {
				t.Fatal(err)
			}
			solve := func(c frontend.Circuit) error {
				w, err := frontend.NewWitness(c, id.ECC().ScalarField())
				if err != nil {
					t.Fatal(err)
				}
				_, err = ccs.Solve(w)
				return err
			}
			a1 := b.AssignmentOn(id, n, 1).(*circuits.Porep)
			a2 := b.AssignmentOn(id, n, 2).(*circuits.Porep)
			for _, a := range []*circuits.Porep{a1, a2} {
				if err := solve(a); err != nil {
					t.Fatalf("porep at %d on %s: the seed's witness does not solve: %v", n, id, err)
				}
			}
			if a1.CommD.(*big.Int).Cmp(a2.CommD.(*big.Int)) == 0 || a1.CommR.(*big.Int).Cmp(a2.CommR.(*big.Int)) == 0 {
				t.Errorf("porep at %d on %s: seeds 1 and 2 give the same roots", n, id)
			}
			plus1 := func(x frontend.Variable) *big.Int { return new(big.Int).Add(x.(*big.Int), big.NewInt(1)) }
			for what, tamper := range map[string]func(c *circuits.Porep){
				"comm_d":           func(c *circuits.Porep) { c.CommD = plus1(c.CommD) },
				"comm_r":           func(c *circuits.Porep) { c.CommR = plus1(c.CommR) },
				"a sibling in C":   func(c *circuits.Porep) { c.Ch[0].CSib[0] = plus1(c.Ch[0].CSib[0]) },
				"a sibling in D":   func(c *circuits.Porep) { c.Ch[0].DSib[0] = plus1(c.Ch[0].DSib[0]) },
				"the data leaf":    func(c *circuits.Porep) { c.Ch[0].DataLeaf = plus1(c.Ch[0].DataLeaf) },
				"a parent's label": func(c *circuits.Porep) { c.Ch[0].Parents[0].Rows[0] = plus1(c.Ch[0].Parents[0].Rows[0]) },
				"the node":         func(c *circuits.Porep) { c.Ch[0].Node = plus1(c.Ch[0].Node) },
			} {
				if what == "a sibling in D" && n < rungSize(9) {
					continue
				}
				c := b.AssignmentOn(id, n, 1).(*circuits.Porep)
				tamper(c)
				if err := solve(c); err == nil {
					t.Errorf("porep at %d on %s: a witness with %s off by one solves", n, id, what)
				}
			}
		}
	}
}

// porep's proofs, of the direct system with gnark's setup, prover and
// verifier, verify on both curves, and not against another seed's
// public inputs.
func TestPorepProvesWithGnark(t *testing.T) {
	b := porep(t)
	for _, id := range bothCurves {
		n := b.Min()
		ccs, err := b.CompileOn(id, n)
		if err != nil {
			t.Fatal(err)
		}
		pk, vk, err := groth16.Setup(ccs)
		if err != nil {
			t.Fatal(err)
		}
		w, err := b.WitnessOn(id, n, 5)
		if err != nil {
			t.Fatal(err)
		}
		proof, err := groth16.Prove(ccs, pk, w)
		if err != nil {
			t.Fatalf("porep on %s: %v", id, err)
		}
		pub, _ := w.Public()
		if err := groth16.Verify(proof, vk, pub); err != nil {
			t.Errorf("porep on %s: %v", id, err)
		}
		other, _ := b.WitnessOn(id, n, 6)
		otherPub, _ := other.Public()
		if err := groth16.Verify(proof, vk, otherPub); err == nil {
			t.Errorf("porep on %s: a proof verifies against another seed's public inputs", id)
		}
	}
}

// The real partition, counted from its source (notes/porep-shape.md).
const (
	realConstraints = 130_278_541
	realWires       = 130_170_221 // private and public, the one included
)

// porep's plan: at 2^27 the real partition (18 challenges of its shape,
// its constraints to within a few, its wires within 1.5×), a domain of
// 2^27; every size from its minimum to 2^27 gives at most that many
// constraints and not under 45% of them; below its minimum it is
// refused, naming it.
func TestPorepPlan(t *testing.T) {
	b := porep(t)
	rung, k, ok := circuits.PorepPlan(1 << 27)
	if !ok || rung != 0 || k != 18 {
		t.Fatalf("at 2^27: rung %d, %d challenges (%v), want the real shape's 18", rung, k, ok)
	}
	sh := b.Shape(1 << 27)
	if d := sh.Constraints - realConstraints; d < -10 || d > 10 {
		t.Errorf("at 2^27: %d constraints, the real partition %d", sh.Constraints, realConstraints)
	}
	if sh.Public != 3+18*18 {
		t.Errorf("at 2^27: %d public inputs, the real partition 3 + 18 a challenge", sh.Public)
	}
	c, w := circuits.Floor(b, 1<<27)
	if c != sh.Constraints {
		t.Errorf("at 2^27: floor %d constraints, shape %d", c, sh.Constraints)
	}
	if r := float64(w) / realWires; r < 1/1.5 || r > 1.5 {
		t.Errorf("at 2^27: %d wires, %.3f× the real partition's %d", w, r, realWires)
	}
	worst := 1.0
	for n := float64(b.Min()); n <= 1<<27; n *= 1.07 {
		sh := b.Shape(int(n))
		if sh.Constraints > int(n) {
			t.Fatalf("at %d: %d constraints", int(n), sh.Constraints)
		}
		worst = min(worst, float64(sh.Constraints)/n)
	}
	if worst < 0.45 {
		t.Errorf("some size gets only %.2f of its constraints", worst)
	}
	_, err := b.CompileOn(curve.BN254, b.Min()-1)
	if err == nil || !strings.Contains(err.Error(), "minimum "+itoa(b.Min())) {
		t.Errorf("below the minimum: %v", err)
	}
	if _, err := b.WitnessOn(curve.BN254, b.Min()-1, 1); err == nil {
		t.Error("a witness below the minimum")
	}
}

// porep's native SHA-256 block function with 64 rounds is SHA-256 (its
// fewer-round variants are the same code cut short).
func TestPorepSHA256IsSHA256(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := range 300 {
		msg := make([]byte, n)
		rng.Read(msg)
		if got, want := circuits.SHA256Blocks(msg, 64), sha256.Sum256(msg); got != want {
			t.Fatalf("%d bytes: %x, SHA-256 %x", n, got, want)
		}
	}
}
