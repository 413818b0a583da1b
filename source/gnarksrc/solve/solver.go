// Copyright 2020-2026 Consensys Software Inc.
// Licensed under the Apache License, Version 2.0. See the LICENSE file for details.

// This file is gnark v0.16.3's constraint/bn254/solver.go (generated there
// by gnark's internal/generator), copied and edited by hand; it is no longer
// generated. gnark's Apache-2.0 licence applies. copiedFromGnark (solve.go)
// names the version; TestCopiedFromGoModGnark fails when go.mod's differs.
//
// What differs from upstream (diff $(go env GOMODCACHE)/github.com/consensys/gnark@v0.16.3/constraint/bn254/solver.go):
//   - package solve instead of cs, importing gnark's constraint/bn254 as cs;
//   - solver embeds *cs.R1CS instead of the unexported *system, and
//     resolveNativeHints takes *cs.R1CS;
//   - newSolver takes Buffers and uses them as values, solved, a, b and c
//     instead of allocating them (it checks their lengths and clears solved,
//     a, b, c); a, b, c keep the caller's capacity, where gnark's have
//     capacity NextPowerOfTwo(constraints);
//   - newSolver handles R1CS only: the witness offset is always 1 (the
//     constant one wire) and the SparseR1CS set-up (publicOffset,
//     initSparseLRO) is gone from it. The SparseR1CS branches elsewhere in
//     the file are upstream's, unchanged and unreached.
// Everything else (levels, blueprints, hints, gnark's native std hints) is
// upstream's code unchanged. To update gnark: copy the new solver.go here,
// reapply the list above, set copiedFromGnark, run this package's tests.

package solve

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bn254"
	csolver "github.com/consensys/gnark/constraint/solver"
	"github.com/rs/zerolog"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// solver represent the state of the solver during a call to System.Solve(...)
type solver struct {
	*cs.R1CS

	// values and solved are indexed by the wire (variable) id
	values []fr.Element
	solved []bool

	// maps hintID to hint function
	mHintsFunctions map[csolver.HintID]csolver.Hint
	// nativeHints maps the HintID of a known std hint to its solver-side native
	// implementation. Lazily populated only for hints that the circuit actually
	// uses, so circuits with no matching hints carry zero overhead.
	nativeHints map[csolver.HintID]nativeHintFn

	// used to out api.Println
	logger  zerolog.Logger
	nbTasks int

	a, b, c fr.Vector // R1CS solver builds the a,b,c matrices
	l, r, o fr.Vector // SparseR1CS solver builds the L,R,O small-domain vectors
	// publicOffset is len(s.Public) cached on the solver to avoid a slice-header
	// load on every setSparseLRO call; setSparseLRO runs once per SCS constraint.
	publicOffset int

	q *big.Int
}

// nativeHintFn is a solver-side implementation of a known std hint that
// operates directly on calldata, avoiding the big.Int round-trip used by the
// generic hint path.
type nativeHintFn func(s *solver, calldata []uint32, scratch *scratch) error

// nativeHintByName lists the std hints for which we ship a solver-side native
// implementation. Detection is by fully-qualified name so that user-supplied
// replacement hints (with a different function pointer) bypass the native path
// and run through the canonical big.Int impl instead.
//
// Renaming a hint here silently disables the native fast path (correctness is
// preserved via the big.Int fallback). Changing a hint's algorithm requires
// updating the matching native impl in this file too.
var nativeHintByName = map[string]nativeHintFn{
	"github.com/consensys/gnark/std/internal/logderivarg.countHint":         (*solver).solveLogderivargCount,
	"github.com/consensys/gnark/std/internal/logderivarg.batchDivBySubHint": (*solver).solveLogderivargBatchDivBySub,
	"github.com/consensys/gnark/std/rangecheck.DecomposeHint":               (*solver).solveRangecheckDecompose,
	"github.com/consensys/gnark/std/math/bits.nBits":                        (*solver).solveBitsNBits,
}

// newSolver is gnark's, with the vectors taken from b instead of allocated:
// values = b.W, solved = b.Solved, a, b, c = b.A, b.B, b.C.
func newSolver(sys *cs.R1CS, witness fr.Vector, bufs Buffers, opts ...csolver.Option) (*solver, error) {
	// parse options
	opt, err := csolver.NewConfig(opts...)
	if err != nil {
		return nil, err
	}

	// check witness size: R1CS has the constant one wire first
	witnessOffset := 1
	nbWires := len(sys.Public) + len(sys.Secret) + sys.NbInternalVariables
	expectedWitnessSize := len(sys.Public) - witnessOffset + len(sys.Secret)

	if len(witness) != expectedWitnessSize {
		return nil, fmt.Errorf("invalid witness size, got %d, expected %d", len(witness), expectedWitnessSize)
	}
	m := sys.GetNbConstraints()
	if len(bufs.W) != nbWires || len(bufs.Solved) != nbWires || len(bufs.A) != m || len(bufs.B) != m || len(bufs.C) != m {
		return nil, fmt.Errorf("solver buffers: %d wires, %d flags, %d/%d/%d evaluations for %d wires and %d constraints",
			len(bufs.W), len(bufs.Solved), len(bufs.A), len(bufs.B), len(bufs.C), nbWires, m)
	}

	// check all hints are there
	hintFunctions := opt.HintFunctions

	// hintsDependencies is from compile time; it contains the list of hints the solver **needs**
	var missing []string
	for hintUUID, hintID := range sys.MHintsDependencies {
		if _, ok := hintFunctions[hintUUID]; !ok {
			missing = append(missing, hintID)
		}
	}

	if len(missing) > 0 {
		return nil, fmt.Errorf("solver missing hint(s): %v", missing)
	}

	// Pooled buffers hold an earlier proof's values: the flags must start
	// false and a, b, c zero (solveR1C accumulates into them); every value
	// is written before it is read.
	clear(bufs.Solved)
	clear(bufs.A)
	clear(bufs.B)
	clear(bufs.C)
	s := solver{
		R1CS:            sys,
		values:          bufs.W,
		solved:          bufs.Solved,
		mHintsFunctions: hintFunctions,
		nativeHints:     resolveNativeHints(sys, hintFunctions),
		logger:          opt.Logger,
		nbTasks:         opt.NbTasks,
		q:               sys.Field(),
		a:               bufs.A,
		b:               bufs.B,
		c:               bufs.C,
	}

	// set the witness indexes as solved
	s.solved[0] = true // ONE_WIRE
	s.values[0].SetOne()
	copy(s.values[witnessOffset:], witness)
	for i := range witness {
		s.solved[i+witnessOffset] = true
	}

	return &s, nil
}

// initSparseLRO allocates and initializes the L,R,O small-domain vectors used
// by the SparseR1CS solver. Public-input rows have no blueprint instruction so
// we fill them here; rows past the constraint range get values[0] to satisfy
// the PLONK permutation argument (wire id 0 by convention).
func (s *solver) initSparseLRO() {
	size := int(ecc.NextPowerOfTwo(uint64(s.GetNbConstraints() + len(s.Public))))
	// +4 leaves room for plonk blinding.
	s.l = make(fr.Vector, size, size+4)
	s.r = make(fr.Vector, size, size+4)
	s.o = make(fr.Vector, size, size+4)

	var s0 fr.Element
	if len(s.values) > 0 {
		s0 = s.values[0]
	}
	for i := 0; i < len(s.Public); i++ {
		s.l[i] = s.values[i]
		s.r[i] = s0
		s.o[i] = s0
	}
	if !s0.IsZero() {
		offset := len(s.Public) + s.GetNbConstraints()
		for i := offset; i < size; i++ {
			s.l[i] = s0
			s.r[i] = s0
			s.o[i] = s0
		}
	}
}

func (s *solver) set(id int, value fr.Element) {
	if s.solved[id] {
		panic("solving the same wire twice should never happen.")
	}
	s.values[id] = value
	s.solved[id] = true
}

// setSparseLRO fills L,R,O for a single SCS constraint. Called from the
// SparseR1CS fast paths so we don't need a second post-solve decompression pass.
func (s *solver) setSparseLRO(cID, xa, xb, xc uint32) {
	i := s.publicOffset + int(cID)
	s.l[i] = s.values[xa]
	s.r[i] = s.values[xb]
	s.o[i] = s.values[xc]
}

// computeTerm computes coeff*variable. Public callers reach it via the
// Solver[E] interface; for the solver hot loop see valueWithCoeff which skips
// the constant-term and solved-wire checks.
func (s *solver) computeTerm(t constraint.Term) fr.Element {
	cID, vID := t.CoeffID(), t.WireID()
	if t.IsConstant() {
		return s.Coefficients[cID]
	}
	if cID != 0 && !s.solved[vID] {
		panic("computing a term with an unsolved wire")
	}
	return s.valueWithCoeff(uint32(cID), uint32(vID))
}

// r += (t.coeff*t.value)
// TODO @gbotrel check t.IsConstant on the caller side when necessary
func (s *solver) accumulateInto(t constraint.Term, r *fr.Element) {
	cID := t.CoeffID()
	vID := t.WireID()

	if t.IsConstant() {
		r.Add(r, &s.Coefficients[cID])
		return
	}

	switch cID {
	case constraint.CoeffIdZero:
		return
	case constraint.CoeffIdOne:
		r.Add(r, &s.values[vID])
	case constraint.CoeffIdTwo:
		var res fr.Element
		res.Double(&s.values[vID])
		r.Add(r, &res)
	case constraint.CoeffIdMinusOne:
		r.Sub(r, &s.values[vID])
	default:
		var res fr.Element
		res.Mul(&s.Coefficients[cID], &s.values[vID])
		r.Add(r, &res)
	}
}

// valueWithCoeff returns coeff * values[vID], with shortcuts for the common
// {0, ±1, 2} coefficients. Hot path used by the SparseR1CS fast solvers.
func (s *solver) valueWithCoeff(cID, vID uint32) fr.Element {
	switch cID {
	case constraint.CoeffIdZero:
		return fr.Element{}
	case constraint.CoeffIdOne:
		return s.values[vID]
	case constraint.CoeffIdTwo:
		var res fr.Element
		res.Double(&s.values[vID])
		return res
	case constraint.CoeffIdMinusOne:
		var res fr.Element
		res.Neg(&s.values[vID])
		return res
	default:
		var res fr.Element
		res.Mul(&s.Coefficients[cID], &s.values[vID])
		return res
	}
}

func (s *solver) printLogs(logs []constraint.LogEntry) {
	if s.logger.GetLevel() == zerolog.Disabled {
		return
	}

	for i := 0; i < len(logs); i++ {
		logLine := s.logValue(logs[i])
		s.logger.Debug().Str(zerolog.CallerFieldName, logs[i].Caller).Msg(logLine)
	}
}

const unsolvedVariable = "<unsolved>"

func (s *solver) logValue(log constraint.LogEntry) string {
	var toResolve []interface{}
	var (
		eval         fr.Element
		missingValue bool
	)
	for j := 0; j < len(log.ToResolve); j++ {
		// before eval le

		missingValue = false
		eval.SetZero()

		for _, t := range log.ToResolve[j] {
			// for each term in the linear expression

			cID, vID := t.CoeffID(), t.WireID()
			if t.IsConstant() {
				// just add the constant
				eval.Add(&eval, &s.Coefficients[cID])
				continue
			}

			if !s.solved[vID] {
				missingValue = true
				break // stop the loop we can't evaluate.
			}

			tv := s.computeTerm(t)
			eval.Add(&eval, &tv)
		}

		// after
		if missingValue {
			toResolve = append(toResolve, unsolvedVariable)
		} else {
			// we have to append our accumulator
			toResolve = append(toResolve, eval.String())
		}

	}
	if len(log.Stack) > 0 {
		var sbb strings.Builder
		for _, lID := range log.Stack {
			location := s.SymbolTable.Locations[lID]
			function := s.SymbolTable.Functions[location.FunctionID]

			sbb.WriteString(function.Name)
			sbb.WriteByte('\n')
			sbb.WriteByte('\t')
			sbb.WriteString(function.Filename)
			sbb.WriteByte(':')
			sbb.WriteString(strconv.Itoa(int(location.Line)))
			sbb.WriteByte('\n')
		}
		toResolve = append(toResolve, sbb.String())
	}
	return fmt.Sprintf(log.Format, toResolve...)
}

// divByCoeff sets res = res / t.Coeff
func (s *solver) divByCoeff(res *fr.Element, cID uint32) {
	switch cID {
	case constraint.CoeffIdOne:
		return
	case constraint.CoeffIdMinusOne:
		res.Neg(res)
	case constraint.CoeffIdZero:
		panic("division by 0")
	default:
		// this is slow, but shouldn't happen as divByCoeff is called to
		// remove the coeff of an unsolved wire
		// but unsolved wires are (in gnark frontend) systematically set with a coeff == 1 or -1
		res.Div(res, &s.Coefficients[cID])
	}
}

// Implement constraint.Solver
func (s *solver) GetValue(cID, vID uint32) constraint.U64 {
	var r constraint.U64
	e := s.computeTerm(constraint.Term{CID: cID, VID: vID})
	copy(r[:], e[:])
	return r
}
func (s *solver) GetCoeff(cID uint32) constraint.U64 {
	var r constraint.U64
	copy(r[:], s.Coefficients[cID][:])
	return r
}
func (s *solver) SetValue(vID uint32, f constraint.U64) {
	s.set(int(vID), *(*fr.Element)(f[:]))
}

func (s *solver) IsSolved(vID uint32) bool {
	return s.solved[vID]
}

// GetBlueprint returns the blueprint with the given ID.
func (s *solver) GetBlueprint(id constraint.BlueprintID) constraint.Blueprint {
	return s.Blueprints[id]
}

// Read interprets input calldata as either a LinearExpression (if R1CS) or a Term (if Plonkish),
// evaluates it and return the result and the number of uint32 word read.
func (s *solver) Read(calldata []uint32) (constraint.U64, int) {
	if s.Type == constraint.SystemSparseR1CS {
		if calldata[0] != 1 {
			panic("invalid calldata")
		}
		return s.GetValue(calldata[1], calldata[2]), 3
	}
	var r fr.Element
	n := int(calldata[0])
	j := 1
	for k := 0; k < n; k++ {
		// we read k Terms
		s.accumulateInto(constraint.Term{CID: calldata[j], VID: calldata[j+1]}, &r)
		j += 2
	}

	var ret constraint.U64
	copy(ret[:], r[:])
	return ret, j
}

// processInstruction dispatches the instruction to the right solver path.
// SparseR1CS instructions go through fast paths that read calldata directly
// and fill L,R,O in place. R1CS goes through solveR1C. Generic hints take the
// calldata-based hint path. Anything else falls back to BlueprintSolvable.
func (s *solver) processInstruction(pi constraint.PackedInstruction, scratch *scratch) error {
	blueprint := s.Blueprints[pi.BlueprintID]
	cID := pi.ConstraintOffset
	calldata := s.CallData[pi.StartCallData:]

	if s.Type == constraint.SystemSparseR1CS {
		switch blueprint.(type) {
		case *constraint.BlueprintSparseR1CAdd[constraint.U64]:
			s.solveSparseR1CAdd(calldata)
			s.setSparseLRO(cID, calldata[0], calldata[1], calldata[2])
			return nil
		case *constraint.BlueprintSparseR1CMul[constraint.U64]:
			s.solveSparseR1CMul(calldata)
			s.setSparseLRO(cID, calldata[0], calldata[1], calldata[2])
			return nil
		case *constraint.BlueprintSparseR1CBool[constraint.U64]:
			if err := s.solveSparseR1CBool(calldata); err != nil {
				return s.wrapErrWithDebugInfo(cID, err)
			}
			s.setSparseLRO(cID, calldata[0], calldata[0], 0)
			return nil
		case *constraint.BlueprintGenericSparseR1C[constraint.U64]:
			if err := s.solveGenericSparseR1C(calldata); err != nil {
				return s.wrapErrWithDebugInfo(cID, err)
			}
			s.setSparseLRO(cID, calldata[0], calldata[1], calldata[2])
			return nil
		case *constraint.BlueprintBatchInverse[constraint.U64]:
			s.solveBatchInverse(calldata, pi.WireOffset, scratch)
			return nil
		}
	} else if bc, ok := blueprint.(constraint.BlueprintR1C); ok {
		// TODO @gbotrel we use the solveR1C method for now, having user-defined
		// blueprint for R1CS would require constraint.Solver interface to add methods
		// to set a,b,c since it's more efficient to compute these while we solve.
		inst := pi.Unpack(&s.System)
		bc.DecompressR1C(&scratch.tR1C, inst)
		return s.solveR1C(cID, &scratch.tR1C)
	}

	if _, ok := blueprint.(*constraint.BlueprintGenericHint); ok {
		return s.solveGenericHint(calldata, scratch)
	}

	// fall back to the generic BlueprintSolvable interface; for SCS blueprints
	// that aren't fast-pathed we still need to fill L,R,O after Solve.
	inst := pi.Unpack(&s.System)
	bc, ok := blueprint.(constraint.BlueprintSolvable[constraint.U64])
	if !ok {
		return nil
	}
	if err := bc.Solve(s, inst); err != nil {
		return s.wrapErrWithDebugInfo(cID, err)
	}
	if s.Type == constraint.SystemSparseR1CS {
		if sparse, ok := blueprint.(constraint.BlueprintSparseR1C); ok {
			var c constraint.SparseR1C
			sparse.DecompressSparseR1C(&c, inst)
			s.setSparseLRO(cID, c.XA, c.XB, c.XC)
		}
	}
	return nil
}

// solveGenericHint runs the hint encoded by a BlueprintGenericHint instruction.
// If a native solver-side implementation is registered for this hint, it runs
// instead of the canonical big.Int path; otherwise we fall back to
// solveHintGeneric which converts inputs/outputs through big.Ints.
func (s *solver) solveGenericHint(calldata []uint32, scratch *scratch) error {
	hintID := csolver.HintID(calldata[1])
	if fn, ok := s.nativeHints[hintID]; ok {
		return fn(s, calldata, scratch)
	}
	return s.solveHintGeneric(hintID, calldata, scratch)
}

// solveHintGeneric is the canonical big.Int hint path. Inputs are read from
// the calldata directly (skipping HintMapping decompression) but each input is
// still converted to a big.Int before invoking the user hint.
func (s *solver) solveHintGeneric(hintID csolver.HintID, calldata []uint32, scratch *scratch) error {
	f, ok := s.mHintsFunctions[hintID]
	if !ok {
		return errors.New("missing hint function")
	}

	nbInputs := int(calldata[2])
	inputs := scratch.bigInts(nbInputs)

	j := 3
	var v fr.Element
	for i := 0; i < nbInputs; i++ {
		n := int(calldata[j])
		j++
		v.SetZero()
		for k := 0; k < n; k++ {
			s.accumulateInto(constraint.Term{CID: calldata[j], VID: calldata[j+1]}, &v)
			j += 2
		}
		scratch.setInput(inputs[i], &v, i)
	}

	outputStart, outputEnd := calldata[j], calldata[j+1]
	outputs := scratch.bigIntOutputs(int(outputEnd - outputStart))

	err := f(s.q, inputs, outputs)

	for i := range outputs {
		v.SetBigInt(outputs[i])
		s.set(int(outputStart)+i, v)
	}
	return err
}

// resolveNativeHints walks the circuit's hint dependencies and binds each one
// for which we have a native impl to the user-supplied hint function. The name
// match guards against user replacements: if the user passed a different
// function under the same HintID, we run their function via the canonical path
// instead.
func resolveNativeHints(sys *cs.R1CS, hintFunctions map[csolver.HintID]csolver.Hint) map[csolver.HintID]nativeHintFn {
	var resolved map[csolver.HintID]nativeHintFn
	for id, name := range sys.MHintsDependencies {
		fn, ok := nativeHintByName[name]
		if !ok {
			continue
		}
		f, ok := hintFunctions[id]
		if !ok || csolver.GetHintName(f) != name {
			continue
		}
		if resolved == nil {
			resolved = make(map[csolver.HintID]nativeHintFn, len(nativeHintByName))
		}
		resolved[id] = fn
	}
	return resolved
}

func (s *solver) setUint64(id int, value uint64) {
	var v fr.Element
	v.SetUint64(value)
	s.set(id, v)
}

// solveBitsNBits is the native impl of std/math/bits.nBits.
func (s *solver) solveBitsNBits(calldata []uint32, _ *scratch) error {
	if int(calldata[2]) != 1 {
		return fmt.Errorf("expected one input, got %d", calldata[2])
	}
	input, nRead := s.readLinearExpression(calldata[3:])
	j := 3 + nRead
	outputStart, outputEnd := calldata[j], calldata[j+1]
	for i := 0; i < int(outputEnd-outputStart); i++ {
		s.setUint64(int(outputStart)+i, elementBitWindow(&input, i, 1))
	}
	return nil
}

// solveRangecheckDecompose is the native impl of std/rangecheck.DecomposeHint:
// split the third input into nbLimbs uint64 limbs of `limbSize` bits each.
// Falls back to the generic path when the input shape doesn't match the
// uint64-limb fast path.
func (s *solver) solveRangecheckDecompose(calldata []uint32, scratch *scratch) error {
	hintID := csolver.HintID(calldata[1])
	if int(calldata[2]) != 3 {
		return fmt.Errorf("rangecheck decompose: expected 3 inputs")
	}
	j := 3
	varSizeElement, nRead := s.readLinearExpression(calldata[j:])
	j += nRead
	varSize, ok := elementToInt(&varSizeElement)
	if !ok {
		return s.solveHintGeneric(hintID, calldata, scratch)
	}
	limbSizeElement, nRead := s.readLinearExpression(calldata[j:])
	j += nRead
	limbSize, ok := elementToInt(&limbSizeElement)
	if !ok || limbSize <= 0 || limbSize >= 64 {
		return s.solveHintGeneric(hintID, calldata, scratch)
	}
	val, nRead := s.readLinearExpression(calldata[j:])
	j += nRead

	nbLimbs := (varSize + limbSize - 1) / limbSize
	outputStart, outputEnd := calldata[j], calldata[j+1]
	if int(outputEnd-outputStart) != nbLimbs {
		return fmt.Errorf("rangecheck decompose: need %d outputs", nbLimbs)
	}
	mask := (uint64(1) << uint(limbSize)) - 1
	for i := 0; i < nbLimbs; i++ {
		s.setUint64(int(outputStart)+i, elementBitWindow(&val, i*limbSize, limbSize)&mask)
	}
	return nil
}

// solveLogderivargCount is the native impl of std/internal/logderivarg.countHint:
// for each table row, count how many query rows match. Inputs are
// (nbTable, nbRow, table_rows..., query_rows...). One output per table row.
func (s *solver) solveLogderivargCount(calldata []uint32, scratch *scratch) error {
	nbInputs := int(calldata[2])
	if nbInputs <= 2 {
		return fmt.Errorf("logderivarg count: at least two inputs required")
	}
	jEnd := skipLinearExpressions(calldata, nbInputs)
	outputStart, outputEnd := calldata[jEnd], calldata[jEnd+1]

	j := 3
	nbTableElement, nRead := s.readLinearExpression(calldata[j:])
	j += nRead
	nbTable, ok := elementToInt(&nbTableElement)
	if !ok {
		return fmt.Errorf("logderivarg count: first input must be table length")
	}
	nbRowElement, nRead := s.readLinearExpression(calldata[j:])
	j += nRead
	nbRow, ok := elementToInt(&nbRowElement)
	if !ok {
		return fmt.Errorf("logderivarg count: second input must be row length")
	}
	if nbInputs < 2+nbTable*nbRow || (nbInputs-2-nbTable*nbRow)%nbRow != 0 {
		return fmt.Errorf("logderivarg count: input shape doesn't match table layout")
	}
	if int(outputEnd-outputStart) != nbTable {
		return fmt.Errorf("logderivarg count: output size mismatch")
	}
	nbQueries := (nbInputs - 2 - nbTable*nbRow) / nbRow
	if nbQueries <= 0 {
		return fmt.Errorf("logderivarg count: at least one query required")
	}

	counts := scratch.uint64s(nbTable)
	if nbRow == 1 {
		idx := scratch.elementMap(nbTable)
		k := j
		for i := 0; i < nbTable; i++ {
			v, nRead := s.readLinearExpression(calldata[k:])
			k += nRead
			if _, exists := idx[v]; exists {
				return fmt.Errorf("logderivarg count: duplicate table key")
			}
			idx[v] = i
		}
		for i := 0; i < nbQueries; i++ {
			v, nRead := s.readLinearExpression(calldata[k:])
			k += nRead
			pos, ok := idx[v]
			if !ok {
				return fmt.Errorf("logderivarg count: query element not in table")
			}
			counts[pos]++
		}
	} else {
		idx := scratch.stringMap(nbTable)
		buf := scratch.byteKey(nbRow * fr.Bytes)
		k := j
		for i := 0; i < nbTable; i++ {
			key, nRead := s.readRowKey(calldata[k:], nbRow, buf)
			k += nRead
			if _, exists := idx[key]; exists {
				return fmt.Errorf("logderivarg count: duplicate table key")
			}
			idx[key] = i
		}
		for i := 0; i < nbQueries; i++ {
			key, nRead := s.readRowKey(calldata[k:], nbRow, buf)
			k += nRead
			pos, ok := idx[key]
			if !ok {
				return fmt.Errorf("logderivarg count: query element not in table")
			}
			counts[pos]++
		}
	}

	for i := 0; i < nbTable; i++ {
		s.setUint64(int(outputStart)+i, counts[i])
	}
	return nil
}

// solveLogderivargBatchDivBySub is the native impl of
// std/internal/logderivarg.batchDivBySubHint: for inputs (challenge, num_0,
// ..., num_{n-1}, t_0, ..., t_{n-1}), compute num_i / (challenge - t_i) using
// a single field inversion via Montgomery batch inversion.
func (s *solver) solveLogderivargBatchDivBySub(calldata []uint32, scratch *scratch) error {
	nbInputs := int(calldata[2])
	jEnd := skipLinearExpressions(calldata, nbInputs)
	outputStart, outputEnd := calldata[jEnd], calldata[jEnd+1]
	n := int(outputEnd - outputStart)
	if nbInputs != 1+2*n {
		return fmt.Errorf("logderivarg batchDivBySub: expected %d inputs, got %d", 1+2*n, nbInputs)
	}

	j := 3
	challenge, nRead := s.readLinearExpression(calldata[j:])
	j += nRead

	numerators := scratch.frElements(n)
	for i := 0; i < n; i++ {
		numerators[i], nRead = s.readLinearExpression(calldata[j:])
		j += nRead
	}

	diffs := scratch.frElements2(n)
	prefix := scratch.frElements3(n)
	var acc fr.Element
	acc.SetOne()
	var diff fr.Element
	for i := 0; i < n; i++ {
		t, nRead := s.readLinearExpression(calldata[j:])
		j += nRead
		diff.Sub(&challenge, &t)
		if diff.IsZero() {
			return fmt.Errorf("logderivarg batchDivBySub: no inverse at index %d", i)
		}
		diffs[i] = diff
		prefix[i] = acc
		acc.Mul(&acc, &diff)
	}

	var invAcc fr.Element
	invAcc.Inverse(&acc)
	for i := n - 1; i >= 0; i-- {
		var inv, res fr.Element
		inv.Mul(&prefix[i], &invAcc)
		invAcc.Mul(&invAcc, &diffs[i])
		res.Mul(&numerators[i], &inv)
		s.set(int(outputStart)+i, res)
	}
	return nil
}

// readRowKey concatenates nbRow linear-expression values into buf and returns
// it as a string key. The string aliases buf, so the caller must consume the
// key before reading the next row into the same buffer (map lookups copy on
// hash, so this is safe inside this hint).
func (s *solver) readRowKey(calldata []uint32, nbRow int, buf []byte) (string, int) {
	j := 0
	for i := 0; i < nbRow; i++ {
		v, nRead := s.readLinearExpression(calldata[j:])
		j += nRead
		bytes := v.Bytes()
		copy(buf[i*fr.Bytes:(i+1)*fr.Bytes], bytes[:])
	}
	return string(buf), j
}

// skipLinearExpressions advances past `n` linear expressions starting from
// calldata[3] and returns the offset of the next field.
func skipLinearExpressions(calldata []uint32, n int) int {
	j := 3
	for i := 0; i < n; i++ {
		j += 1 + 2*int(calldata[j])
	}
	return j
}

// elementToInt returns v as a non-negative int when it fits, false otherwise.
func elementToInt(v *fr.Element) (int, bool) {
	if !v.IsUint64() {
		return 0, false
	}
	n := v.Uint64()
	const maxInt = int(^uint(0) >> 1)
	if n > uint64(maxInt) {
		return 0, false
	}
	return int(n), true
}

const elementWordBits = 64

// elementBitWindow extracts `bitSize` bits from v starting at `bitOffset`.
// Callers must keep bitSize in [1, 63]: a shift by 64 is undefined in Go.
func elementBitWindow(v *fr.Element, bitOffset, bitSize int) uint64 {
	bits := v.Bits()
	var out uint64
	for copied := 0; copied < bitSize; {
		offset := bitOffset + copied
		word := offset / elementWordBits
		if word >= len(bits) {
			break
		}
		shift := uint(offset % elementWordBits)
		take := elementWordBits - int(shift)
		if remaining := bitSize - copied; take > remaining {
			take = remaining
		}
		mask := (uint64(1) << uint(take)) - 1
		out |= ((uint64(bits[word]) >> shift) & mask) << uint(copied)
		copied += take
	}
	return out
}

// solveSparseR1CAdd: qL.xa + qR.xb + qC == xc.
// Calldata layout: xa, xb, xc, qL, qR, qC.
func (s *solver) solveSparseR1CAdd(calldata []uint32) {
	a := s.valueWithCoeff(calldata[3], calldata[0])
	if calldata[4] != constraint.CoeffIdZero {
		b := s.valueWithCoeff(calldata[4], calldata[1])
		a.Add(&a, &b)
	}
	if calldata[5] != constraint.CoeffIdZero {
		a.Add(&a, &s.Coefficients[calldata[5]])
	}
	s.set(int(calldata[2]), a)
}

// solveSparseR1CMul: qM.(xa.xb) == xc.
// Calldata layout: xa, xb, xc, qM.
func (s *solver) solveSparseR1CMul(calldata []uint32) {
	m := s.valueWithCoeff(calldata[3], calldata[0])
	m.Mul(&m, &s.values[calldata[1]])
	s.set(int(calldata[2]), m)
}

// solveSparseR1CBool checks qL.xa + qM.(xa.xa) == 0.
// Calldata layout: xa, qL, qM.
func (s *solver) solveSparseR1CBool(calldata []uint32) error {
	v1 := s.valueWithCoeff(calldata[1], calldata[0])
	v2 := s.valueWithCoeff(calldata[2], calldata[0])
	v := s.values[calldata[0]]
	v.Mul(&v, &v2).Add(&v, &v1)
	if !v.IsZero() {
		return errors.New("boolean constraint doesn't hold")
	}
	return nil
}

// solveGenericSparseR1C: qL.xa + qR.xb + qO.xc + qM.(xa.xb) + qC == 0.
// Calldata layout: xa, xb, xc, qL, qR, qO, qM, qC, commitment.
func (s *solver) solveGenericSparseR1C(calldata []uint32) error {
	if constraint.CommitmentConstraint(calldata[8]) != constraint.NOT {
		// commitment-related constraints don't need solving, the commitment
		// computation will set the wire.
		return nil
	}

	xa, xb, xc := calldata[0], calldata[1], calldata[2]
	ql, qr, qo, qm, qc := calldata[3], calldata[4], calldata[5], calldata[6], calldata[7]

	if !s.solved[xa] {
		// L(qL + qM.xb) = -(qR.xb + qO.xc + qC)
		den := s.valueWithCoeff(qm, xb)
		den.Add(&den, &s.Coefficients[ql])
		if !inverseInPlace(&den) {
			return constraint.ErrDivideByZero
		}
		num := s.valueWithCoeff(qr, xb)
		v2 := s.valueWithCoeff(qo, xc)
		num.Add(&num, &v2).Add(&num, &s.Coefficients[qc])
		num.Mul(&num, &den).Neg(&num)
		s.set(int(xa), num)
		return nil
	}
	if !s.solved[xb] {
		den := s.valueWithCoeff(qm, xa)
		den.Add(&den, &s.Coefficients[qr])
		if !inverseInPlace(&den) {
			return constraint.ErrDivideByZero
		}
		num := s.valueWithCoeff(ql, xa)
		v2 := s.valueWithCoeff(qo, xc)
		num.Add(&num, &v2).Add(&num, &s.Coefficients[qc])
		num.Mul(&num, &den).Neg(&num)
		s.set(int(xb), num)
		return nil
	}
	if !s.solved[xc] {
		o := s.valueWithCoeff(qm, xa)
		o.Mul(&o, &s.values[xb])
		l := s.valueWithCoeff(ql, xa)
		r := s.valueWithCoeff(qr, xb)
		o.Add(&o, &l).Add(&o, &r).Add(&o, &s.Coefficients[qc])
		den := s.Coefficients[qo]
		if !inverseInPlace(&den) {
			return constraint.ErrDivideByZero
		}
		o.Mul(&o, &den).Neg(&o)
		s.set(int(xc), o)
		return nil
	}

	// all wires solved: assertion check.
	l := s.valueWithCoeff(ql, xa)
	r := s.valueWithCoeff(qr, xb)
	m := s.valueWithCoeff(qm, xa)
	m.Mul(&m, &s.values[xb])
	o := s.valueWithCoeff(qo, xc)
	t := m
	t.Add(&t, &l).Add(&t, &r).Add(&t, &o).Add(&t, &s.Coefficients[qc])
	if !t.IsZero() {
		return fmt.Errorf("qL⋅xa + qR⋅xb + qO⋅xc + qM⋅(xaxb) + qC != 0 → %s + %s + %s + %s + %s != 0",
			l.String(), r.String(), o.String(), m.String(), s.Coefficients[qc].String())
	}
	return nil
}

// solveBatchInverse computes Montgomery-style batch inversion of n linear
// expressions, writing the inverses to wires [wireOffset, wireOffset+n).
// Calldata layout: totalSize, n, then n linear expressions in Read() format.
func (s *solver) solveBatchInverse(calldata []uint32, wireOffset uint32, scratch *scratch) {
	n := int(calldata[1])
	if n == 0 {
		return
	}

	inputs := scratch.frElements(n)
	prefix := scratch.frElements2(n)
	var acc fr.Element
	acc.SetOne()

	j := 2
	for i := 0; i < n; i++ {
		val, nRead := s.readLinearExpression(calldata[j:])
		j += nRead
		inputs[i] = val
		if val.IsZero() {
			prefix[i].SetZero()
			continue
		}
		prefix[i] = acc
		acc.Mul(&acc, &val)
	}

	var invAcc fr.Element
	invAcc.Inverse(&acc)
	for i := n - 1; i >= 0; i-- {
		if prefix[i].IsZero() {
			s.set(int(wireOffset)+i, fr.Element{})
			continue
		}
		var result fr.Element
		result.Mul(&prefix[i], &invAcc)
		invAcc.Mul(&invAcc, &inputs[i])
		s.set(int(wireOffset)+i, result)
	}
}

// readLinearExpression evaluates a length-prefixed linear expression encoded as
// (n, cID_0, vID_0, ..., cID_{n-1}, vID_{n-1}) and returns the value and the
// number of uint32 words consumed.
func (s *solver) readLinearExpression(calldata []uint32) (fr.Element, int) {
	var v fr.Element
	n := int(calldata[0])
	j := 1
	for k := 0; k < n; k++ {
		s.accumulateInto(constraint.Term{CID: calldata[j], VID: calldata[j+1]}, &v)
		j += 2
	}
	return v, j
}

// inverseInPlace inverts v in place, returning false when v is zero.
// Shortcuts ±1 to avoid the modular inverse.
func inverseInPlace(v *fr.Element) bool {
	if v.IsZero() {
		return false
	}
	if v.IsOne() {
		return true
	}
	var neg fr.Element
	neg.Neg(v)
	if neg.IsOne() {
		return true
	}
	v.Inverse(v)
	return true
}

// run runs the solver. it returns an error if a constraint is not satisfied or if not all wires
// were instantiated.
func (s *solver) run() error {
	// minWorkPerCPU is the minimum target number of constraint a task should hold
	// in other words, if a level has less than minWorkPerCPU, it will not be parallelized and executed
	// sequentially without sync.
	const minWorkPerCPU = 50.0 // TODO @gbotrel revisit that with blocks.

	// cs.Levels has a list of levels, where all constraints in a level l(n) are independent
	// and may only have dependencies on previous levels
	// for each constraint
	// we are guaranteed that each R1C contains at most one unsolved wire
	// first we solve the unsolved wire (if any)
	// then we check that the constraint is valid
	// if a[i] * b[i] != c[i]; it means the constraint is not satisfied
	var wg sync.WaitGroup
	chTasks := make(chan []uint32, s.nbTasks)
	chError := make(chan error, s.nbTasks)

	// start a worker pool
	// each worker wait on chTasks
	// a task is a slice of constraint indexes to be solved
	for i := 0; i < s.nbTasks; i++ {
		go func() {
			var scratch scratch
			for t := range chTasks {
				for _, i := range t {
					if err := s.processInstruction(s.Instructions[i], &scratch); err != nil {
						chError <- err
						wg.Done()
						return
					}
				}
				wg.Done()
			}
		}()
	}

	// clean up pool go routines
	defer func() {
		close(chTasks)
		close(chError)
	}()

	var scratch scratch

	// for each level, we push the tasks
	for _, level := range s.Levels {

		// max CPU to use
		maxCPU := float64(len(level)) / minWorkPerCPU

		if maxCPU <= 1.0 || s.nbTasks == 1 {
			// we do it sequentially
			for _, i := range level {
				if err := s.processInstruction(s.Instructions[i], &scratch); err != nil {
					return err
				}
			}
			continue
		}

		// number of tasks for this level is set to number of CPU
		// but if we don't have enough work for all our CPU, it can be lower.
		nbTasks := s.nbTasks
		maxTasks := int(math.Ceil(maxCPU))
		if nbTasks > maxTasks {
			nbTasks = maxTasks
		}
		nbIterationsPerCpus := len(level) / nbTasks

		// more CPUs than tasks: a CPU will work on exactly one iteration
		// note: this depends on minWorkPerCPU constant
		if nbIterationsPerCpus < 1 {
			nbIterationsPerCpus = 1
			nbTasks = len(level)
		}

		extraTasks := len(level) - (nbTasks * nbIterationsPerCpus)
		extraTasksOffset := 0

		for i := 0; i < nbTasks; i++ {
			wg.Add(1)
			_start := i*nbIterationsPerCpus + extraTasksOffset
			_end := _start + nbIterationsPerCpus
			if extraTasks > 0 {
				_end++
				extraTasks--
				extraTasksOffset++
			}
			// since we're never pushing more than num CPU tasks
			// we will never be blocked here
			chTasks <- level[_start:_end]
		}

		// wait for the level to be done
		wg.Wait()

		if len(chError) > 0 {
			return <-chError
		}
	}

	for i := range s.solved {
		if !s.solved[i] {
			return errors.New("solver didn't assign a value to all wires")
		}
	}
	return nil
}

// solveR1C compute unsolved wires in the constraint, if any and set the solver accordingly
//
// returns an error if the solver called a hint function that errored
// returns false, nil if there was no wire to solve
// returns true, nil if exactly one wire was solved. In that case, it is redundant to check that
// the constraint is satisfied later.
func (s *solver) solveR1C(cID uint32, r *constraint.R1C) error {
	a, b, c := &s.a[cID], &s.b[cID], &s.c[cID]

	// the index of the non-zero entry shows if L, R or O has an uninstantiated wire
	// the content is the ID of the wire non instantiated
	var loc uint8

	var termToCompute constraint.Term

	processLExp := func(l constraint.LinearExpression, val *fr.Element, locValue uint8) {
		for _, t := range l {
			vID := t.WireID()

			// wire is already computed, we just accumulate in val
			if s.solved[vID] {
				s.accumulateInto(t, val)
				continue
			}

			if loc != 0 {
				panic("found more than one wire to instantiate")
			}
			termToCompute = t
			loc = locValue
		}
	}

	processLExp(r.L, a, 1)
	processLExp(r.R, b, 2)
	processLExp(r.O, c, 3)

	if loc == 0 {
		// there is nothing to solve, may happen if we have an assertion
		// (ie a constraints that doesn't yield any output)
		// or if we solved the unsolved wires with hint functions
		var check fr.Element
		if !check.Mul(a, b).Equal(c) {
			return s.wrapErrWithDebugInfo(cID, fmt.Errorf("%s ⋅ %s != %s", a.String(), b.String(), c.String()))
		}
		return nil
	}

	// we compute the wire value and instantiate it
	wID := termToCompute.WireID()

	// solver result
	var wire fr.Element

	switch loc {
	case 1:
		if !b.IsZero() {
			wire.Div(c, b).
				Sub(&wire, a)
			a.Add(a, &wire)
		} else {
			// we didn't actually ensure that a * b == c
			var check fr.Element
			if !check.Mul(a, b).Equal(c) {
				return s.wrapErrWithDebugInfo(cID, fmt.Errorf("%s ⋅ %s != %s", a.String(), b.String(), c.String()))
			}
		}
	case 2:
		if !a.IsZero() {
			wire.Div(c, a).
				Sub(&wire, b)
			b.Add(b, &wire)
		} else {
			var check fr.Element
			if !check.Mul(a, b).Equal(c) {
				return s.wrapErrWithDebugInfo(cID, fmt.Errorf("%s ⋅ %s != %s", a.String(), b.String(), c.String()))
			}
		}
	case 3:
		wire.Mul(a, b).
			Sub(&wire, c)

		c.Add(c, &wire)
	}

	// wire is the term (coeff * value)
	// but in the solver we want to store the value only
	// note that in gnark frontend, coeff here is always 1 or -1
	s.divByCoeff(&wire, termToCompute.CID)
	s.set(wID, wire)

	return nil
}

// UnsatisfiedConstraintError wraps an error with useful metadata on the unsatisfied constraint
type UnsatisfiedConstraintError struct {
	Err       error
	CID       int     // constraint ID
	DebugInfo *string // optional debug info
}

func (r *UnsatisfiedConstraintError) Error() string {
	if r.DebugInfo != nil {
		return fmt.Sprintf("constraint #%d is not satisfied: %s", r.CID, *r.DebugInfo)
	}
	return fmt.Sprintf("constraint #%d is not satisfied: %s", r.CID, r.Err.Error())
}

func (r *UnsatisfiedConstraintError) Unwrap() error {
	return r.Err
}

func (s *solver) wrapErrWithDebugInfo(cID uint32, err error) *UnsatisfiedConstraintError {
	var debugInfo *string
	if dID, ok := s.MDebug[int(cID)]; ok {
		debugInfo = new(string)
		*debugInfo = s.logValue(s.DebugInfo[dID])
	}
	return &UnsatisfiedConstraintError{CID: int(cID), Err: err, DebugInfo: debugInfo}
}

// scratch holds per-worker reusable buffers so the solver hot loop avoids
// allocations across instructions. Each goroutine in run() owns one.
type scratch struct {
	tR1C constraint.R1C

	// fr.Element arenas; three distinct slices because logderiv batch divide
	// needs three simultaneously (numerators + diffs + prefix products).
	elements  []fr.Element
	elements2 []fr.Element
	elements3 []fr.Element

	counts []uint64 // logderiv count outputs

	// per-shape lookup tables for logderiv count. Allocated once, cleared per use.
	mapElement map[fr.Element]int
	mapString  map[string]int
	keyBuf     []byte

	// big.Int arenas for hint inputs/outputs. ptrs alias values so the hint
	// signature ([]*big.Int) gets stable pointers across calls.
	inputValues  []big.Int
	inputs       []*big.Int
	outputValues []big.Int
	outputs      []*big.Int
	// inputWords backs all input big.Ints' nat slices in a single allocation,
	// so converting fr.Element -> big.Int never allocates. Sized in fr-limb
	// units; one input occupies fr.Limbs words.
	inputWords []big.Word
}

func (s *scratch) frElements(n int) []fr.Element  { return growFrSlice(&s.elements, n) }
func (s *scratch) frElements2(n int) []fr.Element { return growFrSlice(&s.elements2, n) }
func (s *scratch) frElements3(n int) []fr.Element { return growFrSlice(&s.elements3, n) }

func growFrSlice(p *[]fr.Element, n int) []fr.Element {
	*p = slices.Grow((*p)[:0], n)[:n]
	return *p
}

func (s *scratch) uint64s(n int) []uint64 {
	s.counts = slices.Grow(s.counts[:0], n)[:n]
	clear(s.counts)
	return s.counts
}

func (s *scratch) elementMap(hint int) map[fr.Element]int {
	if s.mapElement == nil {
		s.mapElement = make(map[fr.Element]int, hint)
	} else {
		clear(s.mapElement)
	}
	return s.mapElement
}

func (s *scratch) stringMap(hint int) map[string]int {
	if s.mapString == nil {
		s.mapString = make(map[string]int, hint)
	} else {
		clear(s.mapString)
	}
	return s.mapString
}

func (s *scratch) byteKey(n int) []byte {
	s.keyBuf = slices.Grow(s.keyBuf[:0], n)[:n]
	return s.keyBuf
}

func (s *scratch) bigInts(n int) []*big.Int {
	s.inputValues, s.inputs = growBigInts(s.inputValues, s.inputs, n)
	wordsLen := n * fr.Limbs
	if cap(s.inputWords) < wordsLen {
		s.inputWords = make([]big.Word, wordsLen)
	} else {
		s.inputWords = s.inputWords[:wordsLen]
	}
	return s.inputs
}

// setInput converts v into inputs[i] without allocating. On 64-bit platforms
// we point the input's nat slice at our shared inputWords arena; on 32-bit
// platforms the limb width mismatch forces a generic BigInt() call.
func (s *scratch) setInput(dst *big.Int, v *fr.Element, i int) {
	if strconv.IntSize != 64 {
		v.BigInt(dst)
		return
	}
	bits := v.Bits()
	words := s.inputWords[i*fr.Limbs : (i+1)*fr.Limbs]
	for j := 0; j < fr.Limbs; j++ {
		words[j] = big.Word(bits[j])
	}
	dst.SetBits(words)
}

func (s *scratch) bigIntOutputs(n int) []*big.Int {
	s.outputValues, s.outputs = growBigInts(s.outputValues, s.outputs, n)
	for i := 0; i < n; i++ {
		s.outputs[i].SetUint64(0)
	}
	return s.outputs
}

// growBigInts grows the values+ptrs pair in tandem so ptrs[i] always points to
// values[i]. Reallocations are unavoidable (a moved values backing array would
// invalidate every old pointer), but slices.Grow keeps the amortised cost low.
func growBigInts(values []big.Int, ptrs []*big.Int, n int) ([]big.Int, []*big.Int) {
	if cap(values) < n {
		values = make([]big.Int, n)
		ptrs = make([]*big.Int, n)
		for i := 0; i < n; i++ {
			ptrs[i] = &values[i]
		}
		return values, ptrs
	}
	values = values[:n]
	ptrs = ptrs[:n]
	return values, ptrs
}
