// Package solve is gnark's R1CS solver for BN254 (gnark v0.16.3,
// constraint/bn254/solver.go, Apache-2.0, copied into solver.go) made to
// write into vectors the caller gives it. gnark's own ccs.Solve allocates
// W, a, b, c and its solved flags for every proof, (wires + 3m)·32 B fresh
// pages each time; a stream of proofs takes them from pools instead
// (stages.Job.SolverBuffers), so steady-state proofs do not fault them in.
//
// solver.go is gnark's with newSolver taking Buffers instead of allocating
// (its header lists every change); the solving itself is gnark's code
// unchanged, so proofs are gnark's. Updating gnark means copying its
// solver.go again and reapplying that list.
package solve

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bn254"
	csolver "github.com/consensys/gnark/constraint/solver"
)

// copiedFromGnark is the gnark release solver.go was copied from. A go.mod
// naming another gnark fails TestCopiedFromGoModGnark until solver.go is
// copied again from that release.
const copiedFromGnark = "v0.16.3"

// Buffers are the solver's vectors, each of the length Lengths gives. Their
// contents on entry do not matter; Solve overwrites them.
type Buffers struct {
	W       []fr.Element // the wire values
	Solved  []bool       // scratch: which wires have a value yet
	A, B, C []fr.Element // the constraint evaluations a = A·W, b = B·W, c = C·W
}

// Lengths are what sys's Buffers must hold: wires and constraints.
func Lengths(sys *cs.R1CS) (wires, constraints int) {
	return len(sys.Public) + len(sys.Secret) + sys.NbInternalVariables, sys.GetNbConstraints()
}

// Solve is gnark's (*cs.R1CS).Solve writing into b: on success b.W holds
// the full wire vector and b.A, b.B, b.C the constraint evaluations, as
// gnark's R1CSSolution would. witness is the public then secret values, as
// witness.Witness.Vector gives them. An unsatisfied constraint is an error
// (gnark's *cs.UnsatisfiedConstraintError text).
func Solve(sys *cs.R1CS, witness fr.Vector, b Buffers, opts ...csolver.Option) error {
	s, err := newSolver(sys, witness, b, opts...)
	if err != nil {
		return err
	}
	// reset the stateful blueprints, as gnark's Solve does
	for i := range sys.Blueprints {
		if bp, ok := sys.Blueprints[i].(constraint.BlueprintStateful[constraint.U64]); ok {
			bp.Reset()
		}
	}
	// api.Println's logs, once the values are known (or a constraint failed)
	defer s.printLogs(sys.Logs)
	return s.run()
}
