// Package circuits holds zkpipe's built-in circuits: gnark circuits of a
// chosen size, each with a native witness generator, so that a stream of
// proofs can be made and measured without any files of the user's.
//
//	mulchain  x_{i+1} = x_i·(x_i + i + 1): every wire is a random field element
//	bits      64-bit words decomposed into bits, adjacent bits ANDed: almost
//	          every wire is 0 or 1, where batch-addition pays
//	commit    a permutation check Π(a_i − γ) = Π(b_i − γ) with γ = api.Commit(a, b):
//	          a BSB22 commitment in the proof
package circuits

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// Builtin is a circuit family parameterised by its size.
type Builtin struct {
	Name string
	Doc  string
	// circuit returns the definition for about n constraints (n ≥ 4).
	circuit func(n int) frontend.Circuit
	// assign returns a satisfying assignment of circuit(n) drawn from seed.
	assign func(n int, seed int64) frontend.Circuit
	// floor is the fewest constraints and wires circuit(n) has, without
	// compiling, for refusing a size before the compiler's memory is
	// spent; TestFloorIsBelowCompile checks it.
	floor func(n int) (constraints, wires int)
	// shape is what Compile(n) has, without compiling (seconds and GiBs
	// at 2²⁰); see Shape.
	shape func(n int) Shape
}

// Shape is what a built-in's R1CS at a size has: its public inputs (less
// the one wire), its secret inputs, and its constraints where they follow
// from the size without compiling (0 where they do not). TestShapeIsCompiled
// checks it against Compile.
type Shape struct {
	Public, Secret, Constraints int
}

// Shape is the shape of b's R1CS at about n constraints, for checking a
// circuit directory's circuit.json against its circuit.r1cs at load.
func (b Builtin) Shape(n int) Shape { return b.shape(n) }

var builtins = []Builtin{mulchain, bitsCircuit, commitCircuit}

// Names lists the built-in circuits.
func Names() []string {
	var out []string
	for _, b := range builtins {
		out = append(out, b.Name)
	}
	sort.Strings(out)
	return out
}

// Lookup finds a built-in circuit by name.
func Lookup(name string) (Builtin, error) {
	for _, b := range builtins {
		if b.Name == name {
			return b, nil
		}
	}
	return Builtin{}, fmt.Errorf("unknown built-in circuit %q (have %v)", name, Names())
}

// MinConstraints is the smallest size a built-in accepts.
const MinConstraints = 4

// Compile builds the R1CS of b sized for about n constraints.
func (b Builtin) Compile(n int) (constraint.ConstraintSystem, error) {
	if n < MinConstraints {
		return nil, fmt.Errorf("%s: %d constraints is below the minimum %d", b.Name, n, MinConstraints)
	}
	if c, _ := b.floor(n); checkDomain(c) != nil {
		return nil, fmt.Errorf("%s at %d: %w", b.Name, n, checkDomain(c))
	}
	return frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, b.circuit(n))
}

// Witness returns a full witness for b at size n, drawn from seed.
func (b Builtin) Witness(n int, seed int64) (witness.Witness, error) {
	if n < MinConstraints {
		return nil, fmt.Errorf("%s: %d constraints is below the minimum %d", b.Name, n, MinConstraints)
	}
	return frontend.NewWitness(b.assign(n, seed), ecc.BN254.ScalarField())
}

// Assignment returns the assignment behind Witness, for tests that break it.
func (b Builtin) Assignment(n int, seed int64) frontend.Circuit { return b.assign(n, seed) }

// modulus is BN254's scalar field, for native witness arithmetic.
var modulus = ecc.BN254.ScalarField()

func mod(x *big.Int) *big.Int { return x.Mod(x, modulus) }
