package circuits_test

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkpipe/zkpipe/circuits"
)

// Shape must say what Compile makes, since a circuit directory's
// circuit.json is checked with it instead of compiling.
func TestShapeIsCompiled(t *testing.T) {
	for _, name := range circuits.Names() {
		b, err := circuits.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{4, 5, 7, 127, 128, 129, 256, 300, 1001} {
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
