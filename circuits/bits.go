package circuits

import (
	"math/bits"
	"math/rand"

	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	gbits "github.com/consensys/gnark/std/math/bits"
	"github.com/zkpipe/zkpipe/curve"
)

// wordBits is the width of each decomposed word.
const wordBits = 64

// Bits proves that the secret 64-bit words X have Count pairs of adjacent set
// bits in all: each word is decomposed into 64 boolean wires (64 constraints
// and a recomposition), and each adjacent pair ANDed (63 constraints). Almost
// every wire is 0 or 1, so batch-addition replaces most of the MSM work.
type Bits struct {
	X     []frontend.Variable
	Count frontend.Variable `gnark:",public"`
}

func (c *Bits) Define(api frontend.API) error {
	// a word's 63 ANDs are added to count at once: an Add copies count's
	// linear expression (up to gnark's compress threshold, 300 terms), so
	// one Add a product was 29% of the compile
	var count frontend.Variable = 0
	ands := make([]frontend.Variable, wordBits-1)
	for _, x := range c.X {
		b := gbits.ToBinary(api, x, gbits.WithNbDigits(wordBits))
		for j := range ands {
			ands[j] = api.Mul(b[j], b[j+1])
		}
		count = api.Add(count, ands[0], ands[1:]...)
	}
	api.AssertIsEqual(count, c.Count)
	return nil
}

// bitsPerWord is about how many constraints one word costs.
const bitsPerWord = 2 * wordBits

func bitsWords(n int) int { return max(1, n/bitsPerWord) }

var bitsCircuit = Builtin{
	Name: "bits",
	Doc:  "64-bit words decomposed to bits, adjacent bits ANDed; boolean-heavy",
	circuit: func(n int) frontend.Circuit {
		return &Bits{X: make([]frontend.Variable, bitsWords(n))}
	},
	assign: func(_ curve.ID, n int, seed int64) frontend.Circuit { // bits and 64-bit words: the same on every curve
		rng := rand.New(rand.NewSource(seed))
		c := &Bits{X: make([]frontend.Variable, bitsWords(n))}
		count := 0
		for i := range c.X {
			x := rng.Uint64()
			c.X[i] = x
			count += bits.OnesCount64(x & (x >> 1))
		}
		c.Count = count
		return c
	},
	// a word: 64 bits each asserted boolean, 63 ANDs and the recomposition
	floor: func(n int) (int, int) { return bitsPerWord * bitsWords(n), bitsPerWord * bitsWords(n) },
	shape: func(n int) Shape { return Shape{Public: 1, Secret: bitsWords(n)} },
	direct: func(id curve.ID, n int) (constraint.ConstraintSystem, error) {
		return buildBits(id, bitsWords(n))
	},
}
