package circuits_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/mem"
)

// Shape must say what Compile makes, since a circuit directory's
// circuit.json is checked with it instead of compiling.
func TestShapeIsCompiled(t *testing.T) {
	for _, name := range circuits.Names() {
		b, err := circuits.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{4, 5, 7, 127, 128, 129, 256, 300, 1001, b.Min(), b.Min() + 1, 4097, 3*b.Min() + 7} {
			if n < b.Min() {
				continue
			}
			ccs, err := b.Compile(n)
			if err != nil {
				t.Fatal(err)
			}
			sh := b.Shape(n)
			got := circuits.Shape{Public: ccs.GetNbPublicVariables() - 1, Secret: ccs.GetNbSecretVariables(), Constraints: ccs.GetNbConstraints()}
			if sh.Constraints == 0 {
				got.Constraints = 0
			}
			if sh != got {
				t.Errorf("%s at %d: Shape says %+v, Compile made %+v", name, n, sh, got)
			}
		}
	}
}

// The chain computed in Montgomery form is the chain of the definition:
// x_{i+1} = x_i·(x_i+i+1) mod r, here with big.Int.
func TestMulChainWitnessIsTheChain(t *testing.T) {
	b, err := circuits.Lookup("mulchain")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 3, 1000} {
		c := b.Assignment(n, 9).(*circuits.MulChain)
		x := new(big.Int).Set(c.X.(*big.Int))
		for i := 0; i < n-1; i++ {
			x.Mul(x, new(big.Int).Add(x, big.NewInt(int64(i+1))))
			x.Mod(x, ecc.BN254.ScalarField())
		}
		if x.Cmp(c.Y.(*big.Int)) != 0 {
			t.Errorf("n=%d: Y = %s, the chain gives %s", n, c.Y, x)
		}
	}
}

// BenchmarkMulChainWitness: a generate job's parse at 2^20 constraints.
func BenchmarkMulChainWitness(b *testing.B) {
	mc, err := circuits.Lookup("mulchain")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := mc.Witness(1<<20, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// The floor CheckSetup refuses by before compiling must be at most what
// Compile makes: a size is never refused for a circuit smaller than it is.
func TestFloorIsBelowCompile(t *testing.T) {
	for _, name := range circuits.Names() {
		b, err := circuits.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{4, 5, 7, 127, 128, 129, 255, 256, 300, 1001, 4097, b.Min(), 3*b.Min() + 7} {
			if n < b.Min() {
				continue
			}
			ccs, err := b.Compile(n)
			if err != nil {
				t.Fatal(err)
			}
			c, w := circuits.Floor(b, n)
			gotW := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
			if c > ccs.GetNbConstraints() || w > gotW {
				t.Errorf("%s at %d: floor %d constraints and %d wires, Compile made %d and %d", name, n, c, w, ccs.GetNbConstraints(), gotW)
			}
		}
	}
}

// CheckSetup refuses over 2^27 constraints and over the memory allowed,
// naming the figures, and passes what fits; Compile refuses over 2^27
// without compiling.
func TestCheckSetup(t *testing.T) {
	if err := circuits.CheckSetup(1<<27, 1<<27, 0); err != nil {
		t.Fatalf("2^27 with no memory figure: %v", err)
	}
	for _, n := range []int{1<<27 + 1, 2000000000, 1 << 62} {
		err := circuits.CheckSetup(n, n, 1<<50)
		if !errors.Is(err, circuits.ErrTooLarge) || !strings.Contains(err.Error(), "limit of 2^27") {
			t.Errorf("CheckSetup(%d): %v", n, err)
		}
	}
	need := circuits.SetupMemory(1<<20, 1<<20)
	if err := circuits.CheckSetup(1<<20, 1<<20, need); err != nil {
		t.Errorf("a setup needing exactly what is allowed: %v", err)
	}
	err := circuits.CheckSetup(1<<20, 1<<20, need-1)
	if !errors.Is(err, circuits.ErrTooLarge) || !strings.Contains(err.Error(), "needs about "+mem.FormatBytes(need)) ||
		!strings.Contains(err.Error(), "allows "+mem.FormatBytes(need-1)) {
		t.Errorf("over memory: %v", err)
	}
	b, _ := circuits.Lookup("mulchain")
	if _, err := b.Compile(1<<27 + 1); !errors.Is(err, circuits.ErrTooLarge) {
		t.Errorf("Compile(2^27+1): %v", err)
	}
}

// The setup memory model is above every peak RSS measured of zkpipe setup
// (circuits/setupsize.go's table, both curves) and not far above it (at
// most 1.6×, or at most 128 MiB over where the model's base is most of
// it: the model fitted to gnark's setup was 2–3× above these), and it
// allows BN254 bits at a domain of 2^27 on a 128 GiB host (the H200's) but
// not on a 64 GiB one, and refuses any domain over 2^27.
func TestSetupMemoryModelFitsMeasuredPeaks(t *testing.T) {
	for _, m := range []struct {
		name              string
		id                curve.ID
		constraints, wire int
		peak              int64
	}{
		{"bits 65520", curve.BN254, 65511, 65512, 138452 << 10},
		{"mulchain 65536", curve.BN254, 65536, 65538, 146216 << 10},
		{"commit 262144", curve.BN254, 262583, 524728, 533312 << 10},
		{"bits 983040", curve.BN254, 984577, 984578, 615876 << 10},
		{"mulchain 983040", curve.BN254, 983040, 983042, 760 << 20},
		{"bits 1966080", curve.BN254, 1969153, 1969154, 1050 << 20},
		{"mulchain 1966080", curve.BN254, 1966080, 1966082, 1310 << 20},
		{"bits 3932160", curve.BN254, 3938305, 3938306, 1870 << 20},
		{"mulchain 3932160", curve.BN254, 3932160, 3932162, 2400 << 20},
		{"bls bits 983040", curve.BLS12_381, 984577, 984578, 839852 << 10},
		{"bls mulchain 983040", curve.BLS12_381, 983040, 983042, 1025736 << 10},
	} {
		model := circuits.SetupMemoryOn(m.id, m.constraints, m.wire)
		if model < m.peak || (float64(model) > 1.6*float64(m.peak) && model-m.peak > 128<<20) {
			t.Errorf("%s on %s: measured %s, model %s (%.2f×): want 1–1.6× (or within 128 MiB)", m.name, m.id, mem.FormatBytes(m.peak), mem.FormatBytes(model), float64(model)/float64(m.peak))
		}
	}
	bits, _ := circuits.Lookup("bits")
	if err := bits.CheckSetup(125829120, 128<<30); err != nil { // 2^27 domain
		t.Errorf("bits at a domain of 2^27 on a 128 GiB host: %v", err)
	}
	if err := bits.CheckSetup(125829120, 64<<30); !errors.Is(err, circuits.ErrTooLarge) {
		t.Errorf("bits at a domain of 2^27 on a 64 GiB host: %v", err)
	}
	if err := circuits.CheckSetup(1<<27+1, 1<<27+1, 1<<40); !errors.Is(err, circuits.ErrTooLarge) {
		t.Errorf("2^27+1 constraints: %v", err)
	}
}
