package circuits

import (
	"github.com/consensys/gnark/constraint"
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
