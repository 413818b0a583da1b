package circuits

import (
	"math/big"
	"math/rand"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/zkpipe/zkpipe/curve"
)

// MulChain proves knowledge of X with x_n = Y, where x_0 = X and
// x_{i+1} = x_i·(x_i + i + 1). One multiplication per constraint, and every
// wire is a random-looking field element: the worst case for batch-addition.
type MulChain struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
	N int               `gnark:"-"`
}

func (c *MulChain) Define(api frontend.API) error {
	x := c.X
	for i := 0; i < c.N; i++ {
		x = api.Mul(x, api.Add(x, i+1))
	}
	api.AssertIsEqual(x, c.Y)
	return nil
}

var mulchain = Builtin{
	Name: "mulchain",
	Doc:  "x_{i+1} = x_i·(x_i+i+1); every wire significant",
	circuit: func(n int) frontend.Circuit {
		return &MulChain{N: n - 1} // n−1 multiplications and the final equality
	},
	assign: func(id curve.ID, n int, seed int64) frontend.Circuit {
		rng := rand.New(rand.NewSource(seed))
		x0 := new(big.Int).Rand(rng, modulus(id))
		var y *big.Int
		switch id {
		case curve.BLS12_381:
			y = mulchainEndBLS12381(x0, n-1)
		default:
			y = mulchainEnd(x0, n-1)
		}
		return &MulChain{X: x0, Y: y, N: n - 1}
	},
	floor: func(n int) (int, int) { return n, n + 2 }, // the one wire, X, then a wire a product
	shape: func(n int) Shape { return Shape{Public: 1, Secret: 1, Constraints: n} },
	direct: func(id curve.ID, n int) (constraint.ConstraintSystem, error) {
		return buildMulChain(id, n-1)
	},
}

// mulchainEnd is x_steps of the chain from x0 over BN254's Fr, and
// mulchainEndBLS12381 over BLS12-381's: the same eight lines on each
// field's own type. In Montgomery form: 20 ns a step against 500 ns with
// big.Int (578 ms a 2^20 witness, the bottleneck of generate streams); k
// counts up by additions: SetUint64 would cost a second multiplication
// (into Montgomery form) every step. Not one generic function: both
// elements are [4]uint64, one GC shape, so a generic body calls each
// method through its dictionary, 5% slower (measured at 2^16 steps).
func mulchainEnd(x0 *big.Int, steps int) *big.Int {
	var x, t, k, one fr.Element
	x.SetBigInt(x0)
	one.SetOne()
	for i := 0; i < steps; i++ {
		k.Add(&k, &one) // i + 1
		t.Add(&x, &k)
		x.Mul(&x, &t)
	}
	return x.BigInt(new(big.Int))
}

func mulchainEndBLS12381(x0 *big.Int, steps int) *big.Int {
	var x, t, k, one blsfr.Element
	x.SetBigInt(x0)
	one.SetOne()
	for i := 0; i < steps; i++ {
		k.Add(&k, &one)
		t.Add(&x, &k)
		x.Mul(&x, &t)
	}
	return x.BigInt(new(big.Int))
}
