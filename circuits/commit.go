package circuits

import (
	"math/big"
	"math/rand"

	"github.com/consensys/gnark/frontend"
	"github.com/zkpipe/zkpipe/curve"
)

// Commit proves that B is a permutation of A, whose sum is public, with the
// grand-product check Π(a_i − γ) = Π(b_i − γ) at a challenge γ = Commit(A, B)
// that the prover cannot choose: gnark turns api.Commit into a BSB22
// commitment, which the proof carries with its proof of knowledge.
type Commit struct {
	A, B []frontend.Variable
	Sum  frontend.Variable `gnark:",public"`
}

func (c *Commit) Define(api frontend.API) error {
	committer := api.(frontend.Committer)
	gamma, err := committer.Commit(append(append([]frontend.Variable{}, c.A...), c.B...)...)
	if err != nil {
		return err
	}
	var pa, pb frontend.Variable = 1, 1
	var sum frontend.Variable = 0
	for i := range c.A {
		pa = api.Mul(pa, api.Sub(c.A[i], gamma))
		pb = api.Mul(pb, api.Sub(c.B[i], gamma))
		sum = api.Add(sum, c.A[i])
	}
	api.AssertIsEqual(pa, pb)
	api.AssertIsEqual(sum, c.Sum)
	return nil
}

// two multiplications per element
func commitLen(n int) int { return max(2, n/2) }

var commitCircuit = Builtin{
	Name: "commit",
	Doc:  "permutation check at a challenge from api.Commit (BSB22 commitment)",
	circuit: func(n int) frontend.Circuit {
		m := commitLen(n)
		return &Commit{A: make([]frontend.Variable, m), B: make([]frontend.Variable, m)}
	},
	assign: func(id curve.ID, n int, seed int64) frontend.Circuit {
		rng := rand.New(rand.NewSource(seed))
		r := modulus(id)
		m := commitLen(n)
		c := &Commit{A: make([]frontend.Variable, m), B: make([]frontend.Variable, m)}
		sum := new(big.Int)
		vals := make([]*big.Int, m)
		for i := range vals {
			vals[i] = new(big.Int).Rand(rng, r)
			c.A[i] = vals[i]
			sum.Add(sum, vals[i])
		}
		for i, j := range rng.Perm(m) {
			c.B[i] = vals[j]
		}
		c.Sum = sum.Mod(sum, r)
		return c
	},
	// a product term a value on each side; the inputs and the terms are wires
	floor: func(n int) (int, int) { return 2 * commitLen(n), 4 * commitLen(n) },
	shape: func(n int) Shape { return Shape{Public: 1, Secret: 2 * commitLen(n)} },
}
