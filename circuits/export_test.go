package circuits

import (
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/curve"
)

// Floor is b.floor, for tests.
func Floor(b Builtin, n int) (constraints, wires int) { return b.floor(n) }

// CompileWithFrontend is b's compile through gnark's frontend.
func CompileWithFrontend(b Builtin, id curve.ID, n int) (constraint.ConstraintSystem, error) {
	return b.compileWithFrontend(id, n)
}

// SizeOf is the size b's direct build allocates at n, and whether it has one.
func SizeOf(b Builtin, n int) (instructions, calldata, levels, coefficients int, ok bool) {
	var sz size
	switch b.Name {
	case "mulchain":
		sz = mulchainSize(n - 1)
	case "bits":
		sz = bitsSize(bitsWords(n))
	default:
		return 0, 0, 0, 0, false
	}
	return sz.instructions, sz.calldata, sz.levels, sz.coefficients, true
}

// PorepRungs is how many challenge shapes porep has.
func PorepRungs() int { return len(porepLadder) }

// PorepPlan is porep's plan at n: its shape's place in the ladder, its
// challenges, and whether n is at least porep's smallest.
func PorepPlan(n int) (rung, challenges int, ok bool) {
	prm, k, ok := porepPlan(n)
	for i, p := range porepLadder {
		if p == prm {
			return i, k, ok
		}
	}
	return -1, k, ok
}

// PorepRungCost is a rung's globals' and one challenge's constraints.
func PorepRungCost(rung int) (globals, challenge int) {
	g, c := porepLadder[rung].costs()
	return g.constraints, c.constraints
}

// PorepBuild is the direct build of k challenges of a rung.
func PorepBuild(id curve.ID, rung, k int) (constraint.ConstraintSystem, error) {
	return buildPorep(id, porepLadder[rung], k)
}

// PorepCompile is gnark's compile of k challenges of a rung.
func PorepCompile(id curve.ID, rung, k int) (constraint.ConstraintSystem, error) {
	return frontend.Compile(id.ECC().ScalarField(), r1cs.NewBuilder, newPorep(porepLadder[rung], k), porepCircuit.compileOptions...)
}

// PorepAssign is a witness assignment of k challenges of a rung.
func PorepAssign(id curve.ID, rung, k int, seed int64) *Porep {
	return porepAssign(id, porepLadder[rung], k, seed)
}

// SHA256Blocks is SHA-256 of msg through porep's native block function
// with rounds rounds a block.
func SHA256Blocks(msg []byte, rounds int) [32]byte { return sha256Blocks(msg, rounds) }
