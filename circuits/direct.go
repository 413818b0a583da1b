package circuits

import (
	"fmt"
	"strings"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/constraint"
	blscs "github.com/consensys/gnark/constraint/bls12-381"
	bncs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/constraint/solver"
	gbits "github.com/consensys/gnark/std/math/bits"
	"github.com/zkpipe/zkpipe/curve"
)

// The built-ins' R1CS written straight into gnark's constraint system,
// without gnark's frontend: its compile of bits at 2^24 took 62 s on one
// core (expressions merged through a heap, a map entry a boolean), most of
// a setup. Each constraint, wire and coefficient is added in the order and
// form gnark's r1cs builder (frontend/cs/r1cs) gives it for the circuit's
// Define, so that the system serializes byte for byte as frontend.Compile's
// does (TestDirectIsTheFrontendsSystem): circuit directories made before
// stay valid. A change to Define must be made here too; the test fails
// until it is.

// The terms the builder makes without interning: its constants one and
// zero (cOne, cZero).
var (
	termOne  = constraint.Term{VID: 0, CID: constraint.CoeffIdOne}
	termZero = constraint.Term{VID: 0, CID: constraint.CoeffIdZero}
)

// size is what a built-in's system holds when built, for allocating each
// of gnark's slices once at its final length.
type size struct {
	instructions int // constraints and hints
	calldata     int // uint32s of the instructions' encodings
	levels       int // of the solver's dependency levels
	coefficients int // distinct coefficients, with gnark's first five
}

// r1csBuilder appends constraints to a gnark R1CS as its r1cs builder does.
type r1csBuilder struct {
	cs      constraint.R1CS[constraint.U64]
	sys     *constraint.System // cs's, for what it exports
	generic constraint.BlueprintID
	// appendCoeff appends c to the coefficient table without looking
	// it up: for a coefficient known to be new (see buildMulChain)
	appendCoeff func(c constraint.U64) uint32
	// reused for each constraint: AddR1C copies the terms into calldata
	l, r, o constraint.LinearExpression
}

// newR1CSBuilder starts id's system as gnark's builder does (the one
// wire, then the generic R1C and batch-inverse blueprints), with its
// slices allocated at sz.
func newR1CSBuilder(id curve.ID, sz size) (*r1csBuilder, error) {
	var cs constraint.R1CS[constraint.U64]
	var sys *constraint.System
	var appendCoeff func(constraint.U64) uint32
	switch id {
	case curve.BN254:
		c := bncs.NewR1CS(0)
		c.Coefficients = append(make([]fr.Element, 0, sz.coefficients), c.Coefficients...)
		cs, sys = c, &c.System
		appendCoeff = func(k constraint.U64) uint32 {
			c.Coefficients = append(c.Coefficients, fr.Element(k[:fr.Limbs]))
			return uint32(len(c.Coefficients) - 1)
		}
	case curve.BLS12_381:
		c := blscs.NewR1CS(0)
		c.Coefficients = append(make([]blsfr.Element, 0, sz.coefficients), c.Coefficients...)
		cs, sys = c, &c.System
		appendCoeff = func(k constraint.U64) uint32 {
			c.Coefficients = append(c.Coefficients, blsfr.Element(k[:blsfr.Limbs]))
			return uint32(len(c.Coefficients) - 1)
		}
	default:
		return nil, fmt.Errorf("no direct R1CS for curve %s", id)
	}
	sys.Instructions = make([]constraint.PackedInstruction, 0, sz.instructions)
	sys.CallData = make([]uint32, 0, sz.calldata)
	sys.Levels = make([][]uint32, 0, sz.levels)
	cs.AddPublicVariable("1")
	b := &r1csBuilder{cs: cs, sys: sys, appendCoeff: appendCoeff}
	b.generic = cs.AddBlueprint(&constraint.BlueprintGenericR1C{})
	cs.AddBlueprint(&constraint.BlueprintBatchInverse[constraint.U64]{})
	return b, nil
}

// add appends L·R = O with the builder's rule for which side is which:
// the side with fewer terms goes to R (B), for more points at infinity in
// the proving key's B queries.
func (b *r1csBuilder) add(l, r, o constraint.LinearExpression) {
	if len(r) > len(l) {
		l, r = r, l
	}
	b.cs.AddR1C(constraint.R1C{L: l, R: r, O: o}, b.generic)
}

// one is the term 1·w.
func one(w int) constraint.Term { return constraint.Term{VID: uint32(w), CID: constraint.CoeffIdOne} }

// mulchainSize is mulchain's system for steps multiplications.
func mulchainSize(steps int) size {
	return size{
		instructions: steps + 1,
		// a step (x+k)·x = x': 4 + 2·4; the final 1·x = Y: 4 + 2·3
		calldata:     12*steps + 10,
		levels:       steps + 1, // one chain
		coefficients: 5 + max(0, steps-2),
	}
}

// buildMulChain is frontend.Compile of MulChain{N: steps}: x' = x·(x + i + 1)
// then x = Y. Its one constraint shape repeated is written straight into
// gnark's exported slices (calldata, instructions, levels, coefficients)
// rather than through AddR1C, whose allocations and level tree a
// constraint were 85% of the build: 228 ms at 2^20 against 1.94 s for
// the frontend, where bits through AddR1C was already 26× faster. What
// AddR1C would have added is spelled out below; the byte test checks it.
// The system is then as one read from a file is: complete, but without
// gnark's builder state (each wire's level, the coefficient lookup map),
// so it is not for adding constraints to.
func buildMulChain(id curve.ID, steps int) (constraint.ConstraintSystem, error) {
	sz := mulchainSize(steps)
	b, err := newR1CSBuilder(id, sz)
	if err != nil {
		return nil, err
	}
	cs, sys := b.cs, b.sys
	y := uint32(cs.AddPublicVariable("Y"))
	x := uint32(cs.AddSecretVariable("X"))
	firstInternal := uint32(sys.GetNbPublicVariables() + sys.GetNbSecretVariables())
	// each level holds one instruction: one array for all of them
	// instead of one allocation a level
	ids := make([]uint32, sz.levels)
	var k constraint.U64 // i + 1, counted up by additions
	unit := cs.One()
	for i := range uint32(steps) {
		k = cs.Add(k, unit)
		next := firstInternal + i
		// Add(x, i+1) is sorted by wire: the constant's wire 0 first.
		// 1 and 2 have gnark's fixed ids; every later i+1 is new, so it
		// is appended without gnark's lookup map.
		var kID uint32
		if i < 2 {
			kID = cs.AddCoeff(k)
		} else {
			kID = b.appendCoeff(k)
		}
		// L = 1·(i+1) + 1·x (two terms, so L), R = 1·x, O = 1·next
		b.appendR1C(i, next+1, 12, 2, 1, 1, kID, 0, constraint.CoeffIdOne, x, constraint.CoeffIdOne, x, constraint.CoeffIdOne, next)
		ids[i] = i // x is the previous step's output: one level further
		sys.Levels = append(sys.Levels, ids[i:i+1:i+1])
		x = next
	}
	last := uint32(steps)
	// AssertIsEqual(x, Y): L = the constant 1, R = 1·x, O = 1·Y
	b.appendR1C(last, firstInternal+last, 10, 1, 1, 1, constraint.CoeffIdOne, 0, constraint.CoeffIdOne, x, constraint.CoeffIdOne, y)
	ids[last] = last
	sys.Levels = append(sys.Levels, ids[last:last+1:last+1])
	sys.NbInternalVariables = steps
	return cs, nil
}

// appendR1C appends what AddR1C adds for a generic R1C but its level: its
// calldata (the encoding's length, the lengths of L, R and O, then each
// term's coefficient id and wire) and its instruction, constraint number
// id with wires wires (public, secret and internal) made before it.
func (b *r1csBuilder) appendR1C(id, wires uint32, calldata ...uint32) {
	sys := b.sys
	sys.Instructions = append(sys.Instructions, constraint.PackedInstruction{
		StartCallData:    uint64(len(sys.CallData)),
		ConstraintOffset: id,
		WireOffset:       wires,
		BlueprintID:      b.generic,
	})
	sys.CallData = append(sys.CallData, calldata...)
	sys.NbConstraints++
}

// compressThreshold is gnark's default CompressThreshold: a sum of this
// many terms or more is replaced by a new wire and the constraint sum·1 = w.
const compressThreshold = 300

// bitsPlan is what the count of Bits does over words words: how many
// compressions, and the calldata they and the final equality take.
func bitsPlan(words int) (compressions, calldata int) {
	count := 0 // terms of the running count
	for range words {
		count += wordBits - 1
		if count >= compressThreshold {
			compressions++
			calldata += 4 + 2*(count+2)
			count = 1
		}
	}
	return compressions, calldata + 4 + 2*(count+2)
}

// bitsSize is bits' system for words words.
func bitsSize(words int) size {
	compressions, countData := bitsPlan(words)
	perWord := 8 + // the hint: header 3, one input of one term 3, output range 2
		wordBits*12 + // booleans (1 − b)·b = 0
		4 + 2*(wordBits+2) + // the recomposition Σ2^i·b_i · 1 = x
		(wordBits-1)*10 // the ANDs b_j·b_{j+1} = a_j
	return size{
		instructions: words*(1+2*wordBits) + compressions + 1,
		calldata:     words*perWord + countData,
		// hints; the words' constraints; each compression one more (a
		// chain); the final equality
		levels:       3 + compressions,
		coefficients: 5 + wordBits - 2, // 2^i past 0, 1, 2, −1, −2
	}
}

// nBits is gnark's std/math/bits hint ToBinary decomposes with: its
// registered function, so that the system names the same hint.
var nBits = func() solver.Hint {
	for _, h := range gbits.GetHints() {
		if strings.HasSuffix(solver.GetHintName(h), ".nBits") {
			return h
		}
	}
	panic("gnark's std/math/bits registers no nBits hint")
}()

// buildBits is frontend.Compile of Bits with words words: each word
// ToBinary'd (a hint, then each bit asserted boolean, then the
// recomposition), its adjacent bits ANDed, the ANDs added to a count that
// is compressed past compressThreshold terms, and the count equal to Count.
func buildBits(id curve.ID, words int) (constraint.ConstraintSystem, error) {
	b, err := newR1CSBuilder(id, bitsSize(words))
	if err != nil {
		return nil, err
	}
	cs := b.cs
	countWire := cs.AddPublicVariable("Count")
	xs := make([]int, words)
	for i := range xs {
		xs[i] = cs.AddSecretVariable(fmt.Sprintf("X_%d", i))
	}
	// the recomposition's coefficients 2^i, interned in order as its
	// first word's constraint does
	var pow [wordBits]uint32
	for i := range pow {
		pow[i] = cs.AddCoeff(cs.FromInterface(uint64(1) << i))
	}
	id2 := solver.GetHintID(nBits)
	input := []constraint.LinearExpression{make(constraint.LinearExpression, 1)}
	recompose := make(constraint.LinearExpression, wordBits)
	count := make(constraint.LinearExpression, 0, compressThreshold+wordBits)
	for _, x := range xs {
		input[0][0] = one(x)
		bits, err := cs.AddSolverHint(nBits, id2, input, wordBits)
		if err != nil {
			return nil, err
		}
		for i, bit := range bits {
			b.l = append(b.l[:0], termOne, constraint.Term{VID: uint32(bit), CID: constraint.CoeffIdMinusOne})
			b.r = append(b.r[:0], one(bit))
			b.o = append(b.o[:0], termZero)
			b.add(b.l, b.r, b.o)
			recompose[i] = constraint.Term{VID: uint32(bit), CID: pow[i]}
		}
		b.o = append(b.o[:0], one(x))
		b.add(recompose, constraint.LinearExpression{termOne}, b.o)
		for j := range wordBits - 1 {
			and := cs.AddInternalVariable()
			b.l = append(b.l[:0], one(bits[j]))
			b.r = append(b.r[:0], one(bits[j+1]))
			b.o = append(b.o[:0], one(and))
			b.add(b.l, b.r, b.o)
			count = append(count, one(and)) // new wires sort last
		}
		if len(count) >= compressThreshold {
			t := cs.AddInternalVariable()
			b.r = append(b.r[:0], termOne)
			b.o = append(b.o[:0], one(t))
			b.add(count, b.r, b.o)
			count = append(count[:0], one(t))
		}
	}
	b.l = append(b.l[:0], termOne)
	b.o = append(b.o[:0], one(countWire))
	b.add(b.l, count, b.o)
	return cs, nil
}
