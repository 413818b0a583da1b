package circuits

import (
	"math/big"
	"math/rand"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/frontend"
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
	assign: func(n int, seed int64) frontend.Circuit {
		rng := rand.New(rand.NewSource(seed))
		x0 := mod(new(big.Int).Rand(rng, modulus))
		// In Montgomery form: 20 ns a step against 500 ns with big.Int
		// (578 ms a 2^20 witness, the bottleneck of generate streams).
		// k counts up by additions: SetUint64 would cost a second
		// multiplication (into Montgomery form) every step.
		var x, t, k, one fr.Element
		x.SetBigInt(x0)
		one.SetOne()
		for i := 0; i < n-1; i++ {
			k.Add(&k, &one) // i + 1
			t.Add(&x, &k)
			x.Mul(&x, &t)
		}
		return &MulChain{X: x0, Y: x.BigInt(new(big.Int)), N: n - 1}
	},
	floor: func(n int) (int, int) { return n, n + 2 }, // the one wire, X, then a wire a product
	shape: func(n int) Shape { return Shape{Public: 1, Secret: 1, Constraints: n} },
}
