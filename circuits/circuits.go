// Package circuits holds zkpipe's built-in circuits: gnark circuits of a
// chosen size, each with a native witness generator, so that a stream of
// proofs can be made and measured without any files of the user's.
//
//	mulchain  x_{i+1} = x_i·(x_i + i + 1): every wire is a random field element
//	bits      64-bit words decomposed into bits, adjacent bits ANDed: almost
//	          every wire is 0 or 1, where batch-addition pays
//	porep     shaped as a Filecoin 32 GiB PoRep C2 partition: SHA-256 bit
//	          by bit (labels, tree D), Poseidon Merkle paths (trees C, R)
//	commit    a permutation check Π(a_i − γ) = Π(b_i − γ) with γ = api.Commit(a, b):
//	          a BSB22 commitment in the proof
//
// Each compiles over the scalar field of any curve of package curve
// (CompileOn, WitnessOn); Compile and Witness are BN254's.
package circuits

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/curve"
)

// Builtin is a circuit family parameterised by its size.
type Builtin struct {
	Name string
	Doc  string
	// circuit returns the definition for about n constraints (n ≥ 4).
	circuit func(n int) frontend.Circuit
	// assign returns a satisfying assignment of circuit(n) over id's
	// scalar field, drawn from seed.
	assign func(id curve.ID, n int, seed int64) frontend.Circuit
	// floor is the fewest constraints and wires circuit(n) has, without
	// compiling, for refusing a size before the compiler's memory is
	// spent; TestFloorIsBelowCompile checks it.
	floor func(n int) (constraints, wires int)
	// shape is what Compile(n) has, without compiling (seconds and GiBs
	// at 2²⁰); see Shape.
	shape func(n int) Shape
	// direct, where set, builds circuit(n)'s R1CS without gnark's
	// frontend, byte for byte the same (direct.go); nil compiles circuit(n).
	direct func(id curve.ID, n int) (constraint.ConstraintSystem, error)
	// min, where set, is the fewest constraints the built-in is made of
	// (else MinConstraints): a smaller size is refused.
	min func() int
	// compileOptions are gnark's compile options for circuit(n), which
	// direct reproduces.
	compileOptions []frontend.CompileOption
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

var builtins = []Builtin{mulchain, bitsCircuit, commitCircuit, porepCircuit}

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

// Min is the fewest constraints b takes: a smaller size is refused.
func (b Builtin) Min() int {
	if b.min != nil {
		return max(MinConstraints, b.min())
	}
	return MinConstraints
}

// checkSize refuses a size below b's minimum.
func (b Builtin) checkSize(n int) error {
	if m := b.Min(); n < m {
		return fmt.Errorf("%s: %d constraints is below the minimum %d", b.Name, n, m)
	}
	return nil
}

// Compile builds the R1CS of b over BN254 sized for about n constraints.
func (b Builtin) Compile(n int) (constraint.ConstraintSystem, error) {
	return b.CompileOn(curve.BN254, n)
}

// CompileOn builds the R1CS of b over id's scalar field sized for about n
// constraints.
func (b Builtin) CompileOn(id curve.ID, n int) (constraint.ConstraintSystem, error) {
	if err := b.checkSize(n); err != nil {
		return nil, err
	}
	if !id.Valid() {
		return nil, fmt.Errorf("%s: no curve %s", b.Name, id)
	}
	if c, _ := b.floor(n); checkDomain(c) != nil {
		return nil, fmt.Errorf("%s at %d: %w", b.Name, n, checkDomain(c))
	}
	if b.direct != nil {
		return b.direct(id, n)
	}
	return b.compileWithFrontend(id, n)
}

// compileWithFrontend is gnark's compile of circuit(n): the built-ins with
// a direct build are checked against it.
func (b Builtin) compileWithFrontend(id curve.ID, n int) (constraint.ConstraintSystem, error) {
	return frontend.Compile(id.ECC().ScalarField(), r1cs.NewBuilder, b.circuit(n), b.compileOptions...)
}

// Witness returns a full BN254 witness for b at size n, drawn from seed.
func (b Builtin) Witness(n int, seed int64) (witness.Witness, error) {
	return b.WitnessOn(curve.BN254, n, seed)
}

// WitnessOn returns a full witness over id's scalar field for b at size n,
// drawn from seed.
func (b Builtin) WitnessOn(id curve.ID, n int, seed int64) (witness.Witness, error) {
	if err := b.checkSize(n); err != nil {
		return nil, err
	}
	if !id.Valid() {
		return nil, fmt.Errorf("%s: no curve %s", b.Name, id)
	}
	return frontend.NewWitness(b.assign(id, n, seed), id.ECC().ScalarField())
}

// Assignment returns the BN254 assignment behind Witness, for tests that
// break it.
func (b Builtin) Assignment(n int, seed int64) frontend.Circuit {
	return b.assign(curve.BN254, n, seed)
}

// AssignmentOn returns the assignment behind WitnessOn.
func (b Builtin) AssignmentOn(id curve.ID, n int, seed int64) frontend.Circuit {
	return b.assign(id, n, seed)
}

// modulus is id's scalar field, for native witness arithmetic.
func modulus(id curve.ID) *big.Int { return id.ECC().ScalarField() }
