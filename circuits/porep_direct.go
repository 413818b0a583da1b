package circuits

import (
	"fmt"
	"math/big"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/schema"
	"github.com/zkpipe/zkpipe/curve"
)

// porep's direct build: the gadgets run on directPorep, which does what
// gnark's r1cs builder does for each operation (linear expressions
// sorted by wire with equal wires merged and zeros dropped, coefficients
// interned in the order the builder interns them, L and R swapped so that
// R has the fewer terms), for the globals and the first challenge only.
// Every challenge is the same circuit on its own wires (its inputs a
// contiguous block of the public and of the secret inputs, its internal
// wires a contiguous block), so the others are the first's instructions
// copied with their wires moved, over all cores: the system is byte for
// byte frontend.Compile's (TestPorepDirectIsTheFrontendsSystem) at 1/C of
// the work.

// dterm is a term of a linear expression: a wire and its coefficient.
type dterm struct {
	vid uint32
	c   constraint.U64
}

type dle []dterm

// directPorep is porepAPI on a gnark R1CS.
type directPorep struct {
	b       *r1csBuilder
	cs      constraint.R1CS[constraint.U64]
	tOne    constraint.U64
	scratch []dterm
	keys    []uint64
	consts  map[*big.Int]constraint.U64
}

func (d *directPorep) isConst(x dle) bool { return len(x) == 1 && x[0].vid == 0 }

func (d *directPorep) constant(c *big.Int) dle {
	return dle{{0, d.cs.FromInterface(c)}}
}

// add is the builder's add: every term in order of wire, equal wires'
// coefficients summed, zero coefficients dropped; nothing left is 0.
func (d *directPorep) add(vs ...dle) dle {
	if len(vs) == 1 {
		return vs[0]
	}
	return d.merge(vs, false)
}

func (d *directPorep) sub(a, b dle) dle { return d.merge([]dle{a, b}, true) }

func (d *directPorep) merge(vs []dle, sub bool) dle {
	if len(vs) == 2 && !sub {
		return d.merge2(vs[0], vs[1])
	}
	t := d.scratch[:0]
	var zero constraint.U64
	sorted := true
	for i, v := range vs {
		for _, x := range v {
			if x.c == zero {
				continue
			}
			if sub && i > 0 {
				x.c = d.cs.Neg(x.c)
			}
			if n := len(t); n > 0 && t[n-1].vid > x.vid {
				sorted = false
			}
			t = append(t, x)
		}
	}
	d.scratch = t
	return d.combine(t, sorted)
}

// combine is the canonical expression of the terms t: sorted by wire
// (positions sorted when t is not), equal wires summed, zeros dropped.
func (d *directPorep) combine(t []dterm, sorted bool) dle {
	out := make(dle, 0, len(t))
	if !sorted {
		keys := d.keys[:0]
		for i, x := range t {
			keys = append(keys, uint64(x.vid)<<32|uint64(i))
		}
		slices.Sort(keys)
		d.keys = keys
		for _, k := range keys {
			out = d.accumulate(out, t[uint32(k)])
		}
		return d.nonEmpty(out)
	}
	for _, x := range t {
		out = d.accumulate(out, x)
	}
	return d.nonEmpty(out)
}

// accumulate appends x to out, sorted by wire, adding it to out's last
// term where that is x's wire (dropping the term if it sums to 0).
func (d *directPorep) accumulate(out dle, x dterm) dle {
	var zero constraint.U64
	if n := len(out); n > 0 && out[n-1].vid == x.vid {
		out[n-1].c = d.cs.Add(out[n-1].c, x.c)
		if out[n-1].c == zero {
			out = out[:n-1]
		}
		return out
	}
	return append(out, x)
}

func (d *directPorep) nonEmpty(out dle) dle {
	if len(out) == 0 {
		out = append(out, dterm{})
	}
	return out
}

// merge2 is merge of two sorted expressions.
func (d *directPorep) merge2(a, b dle) dle {
	var zero constraint.U64
	out := make(dle, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var x dterm
		if j == len(b) || i < len(a) && a[i].vid <= b[j].vid {
			x = a[i]
			i++
		} else {
			x = b[j]
			j++
		}
		if x.c == zero {
			continue
		}
		out = d.accumulate(out, x)
	}
	return d.nonEmpty(out)
}

// u64 is c in the field, cached for the gadgets' constants (2^i, round
// constants, matrices: the same *big.Int each time).
func (d *directPorep) u64(c *big.Int) constraint.U64 {
	if v, ok := d.consts[c]; ok {
		return v
	}
	v := d.cs.FromInterface(c)
	d.consts[c] = v
	return v
}

// mulConstant is the builder's: each coefficient times c, or the
// constant 0.
func (d *directPorep) mulConstant(a dle, c constraint.U64) dle {
	var zero constraint.U64
	if c == zero {
		return dle{{}}
	}
	out := make(dle, len(a))
	for i, x := range a {
		out[i] = dterm{x.vid, d.cs.Mul(x.c, c)}
	}
	return out
}

func (d *directPorep) mulConst(a dle, c *big.Int) dle {
	cc := d.u64(c)
	if d.isConst(a) {
		return dle{{0, d.cs.Mul(a[0].c, cc)}}
	}
	return d.mulConstant(a, cc)
}

// sum gathers every term of every vs[i] times cs[i] and merges them once:
// what the builder's Add of its Muls by constants gives.
func (d *directPorep) sum(vs []dle, cs []*big.Int) dle {
	t := d.scratch[:0]
	var zero constraint.U64
	sorted := true
	for i, v := range vs {
		k, scale := d.tOne, false
		if cs[i] != nil {
			k = d.u64(cs[i])
			scale = k != d.tOne
			if k == zero {
				continue
			}
		}
		for _, x := range v {
			if x.c == zero {
				continue
			}
			if scale {
				x.c = d.cs.Mul(x.c, k)
			}
			if n := len(t); n > 0 && t[n-1].vid > x.vid {
				sorted = false
			}
			t = append(t, x)
		}
	}
	d.scratch = t
	return d.combine(t, sorted)
}

func (d *directPorep) mul(a, b dle) dle {
	switch ca, cb := d.isConst(a), d.isConst(b); {
	case ca && cb:
		return dle{{0, d.cs.Mul(a[0].c, b[0].c)}}
	case ca:
		return d.mulConstant(b, a[0].c)
	case cb:
		return d.mulConstant(a, b[0].c)
	}
	res := uint32(d.cs.AddInternalVariable())
	bb := d.b
	bb.l = d.linear(bb.l[:0], a)
	bb.r = d.linear(bb.r[:0], b)
	bb.o = append(bb.o[:0], one(int(res)))
	bb.add(bb.l, bb.r, bb.o)
	return dle{{res, d.tOne}}
}

// linear appends x as the builder's getLinearExpression makes it: the
// constants 0 and 1 as its own terms, else each term's coefficient
// interned in order.
func (d *directPorep) linear(to constraint.LinearExpression, x dle) constraint.LinearExpression {
	if d.isConst(x) {
		var zero constraint.U64
		switch x[0].c {
		case zero:
			return append(to, termZero)
		case d.tOne:
			return append(to, termOne)
		}
	}
	for _, t := range x {
		to = append(to, constraint.Term{VID: t.vid, CID: d.cs.AddCoeff(t.c)})
	}
	return to
}

func (d *directPorep) assertEqual(a, b dle) {
	if d.isConst(a) && d.isConst(b) {
		if a[0].c != b[0].c {
			panic("porep: two different constants asserted equal")
		}
		return
	}
	bb := d.b
	bb.r = d.linear(bb.r[:0], a)
	bb.o = d.linear(bb.o[:0], b)
	bb.l = append(bb.l[:0], termOne)
	bb.add(bb.l, bb.r, bb.o)
}

func (d *directPorep) assertBoolean(a dle) {
	if d.isConst(a) {
		return
	}
	nv := d.sub(dle{{0, d.tOne}}, a)
	bb := d.b
	bb.l = d.linear(bb.l[:0], a)
	bb.r = d.linear(bb.r[:0], nv)
	bb.o = append(bb.o[:0], termZero)
	bb.add(bb.l, bb.r, bb.o)
}

func (d *directPorep) hint(f solver.Hint, n int, in dle) []dle {
	inputs := []constraint.LinearExpression{d.linear(nil, in)}
	wires, err := d.cs.AddSolverHint(f, solver.GetHintID(f), inputs, n)
	if err != nil {
		panic(err)
	}
	out := make([]dle, n)
	for i, w := range wires {
		out[i] = dle{{uint32(w), d.tOne}}
	}
	return out
}

var tVariable = reflect.TypeOf((*frontend.Variable)(nil)).Elem()

// wireRange is a half-open range of wire ids.
type wireRange struct{ lo, hi uint32 }

func (r wireRange) has(w uint32) bool { return r.lo <= w && w < r.hi }

// buildPorep is frontend.Compile of a Porep of challenges challenges of
// shape prm (with no compression of long sums, porepCircuit's option).
func buildPorep(id curve.ID, prm porepParams, challenges int) (constraint.ConstraintSystem, error) {
	// the globals' and first challenge's instructions, and about their
	// calldata (20 words a constraint: 19.4 measured at every shape's
	// full rounds), allocated once
	gc, cc := prm.costs()
	instr := gc.constraints + gc.hints + cc.constraints + cc.hints
	b, err := newR1CSBuilder(id, size{instructions: instr, calldata: 20 * (gc.constraints + cc.constraints)})
	if err != nil {
		return nil, err
	}
	cs, sys := b.cs, b.sys
	c := newPorep(prm, challenges)
	// the inputs as the frontend's schema walk makes them: publics, then
	// secrets, each in the struct's order
	chPub := make([]wireRange, challenges)
	chSec := make([]wireRange, challenges)
	var current *[]wireRange
	var walking int
	note := func(w int) {
		if current == nil || walking < 0 {
			return
		}
		r := &(*current)[walking]
		if r.hi == 0 {
			r.lo = uint32(w)
		}
		r.hi = uint32(w) + 1
	}
	one := cs.One()
	for _, vis := range []schema.Visibility{schema.Public, schema.Secret} {
		walking = -1
		if vis == schema.Public {
			current = &chPub
		} else {
			current = &chSec
		}
		_, err := schema.Walk(id.ECC().ScalarField(), c, tVariable, func(f schema.LeafInfo, v reflect.Value) error {
			if f.Visibility != vis {
				return nil
			}
			var w int
			if vis == schema.Public {
				w = cs.AddPublicVariable(f.FullName())
			} else {
				w = cs.AddSecretVariable(f.FullName())
			}
			v.Set(reflect.ValueOf(dle{{uint32(w), one}}))
			walking = chOf(c, v)
			note(w)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for k := 1; k < challenges; k++ {
		if chPub[k].lo != chPub[k-1].hi || chSec[k].lo != chSec[k-1].hi ||
			chPub[k].hi-chPub[k].lo != chPub[0].hi-chPub[0].lo || chSec[k].hi-chSec[k].lo != chSec[0].hi-chSec[0].lo {
			return nil, fmt.Errorf("porep: challenge %d's inputs are not the next block of wires", k)
		}
	}
	d := &directPorep{b: b, cs: cs, tOne: one, consts: map[*big.Int]constraint.U64{}}
	g := newGadgets[dle](d, id.ECC().ScalarField(), prm)
	st := g.globals(c)
	i0, cd0, c0, w0 := len(sys.Instructions), len(sys.CallData), sys.NbConstraints, sys.NbInternalVariables
	g.challenge(st, &c.Ch[0])
	if challenges > 1 {
		nbInputs := uint32(sys.GetNbPublicVariables() + sys.GetNbSecretVariables())
		replicate(sys, b.generic, challenges, replicaOf{
			instr: [2]int{i0, len(sys.Instructions)}, calldata: [2]int{cd0, len(sys.CallData)},
			constraints: sys.NbConstraints - c0,
			pub:         chPub[0], sec: chSec[0],
			internal: wireRange{nbInputs + uint32(w0), nbInputs + uint32(sys.NbInternalVariables)},
		})
	}
	return cs, nil
}

// chOf is which challenge v (a field of c, found by address) belongs to,
// or −1 for the globals.
func chOf(c *Porep, v reflect.Value) int {
	if len(c.Ch) == 0 || !v.CanAddr() {
		return -1
	}
	addr := v.UnsafeAddr()
	for k := range c.Ch {
		if within(addr, &c.Ch[k]) {
			return k
		}
	}
	return -1
}

// within is whether addr is one of ch's inputs.
func within(addr uintptr, ch *PorepChallenge) bool {
	in := func(xs []frontend.Variable) bool {
		if len(xs) == 0 {
			return false
		}
		lo := reflect.ValueOf(&xs[0]).Pointer()
		return lo <= addr && addr < lo+uintptr(len(xs))*tVariable.Size()
	}
	for _, x := range []*frontend.Variable{&ch.DPath, &ch.Node, &ch.RPath, &ch.CPath, &ch.DataLeaf} {
		if reflect.ValueOf(x).Pointer() == addr {
			return true
		}
	}
	for _, xs := range [][]frontend.Variable{ch.ParentPath, ch.DIndex, ch.DSib, ch.NodeBits, ch.RIndex, ch.RSib, ch.CIndex, ch.CSib} {
		if in(xs) {
			return true
		}
	}
	for _, col := range ch.Parents {
		if in(col.Rows) || in(col.Index) || in(col.Sib) {
			return true
		}
	}
	return false
}

// replicaOf is the first challenge's part of the system.
type replicaOf struct {
	instr, calldata    [2]int // [first, end) of its instructions and calldata
	constraints        int
	pub, sec, internal wireRange
}

// replicate appends challenges−1 copies of the first challenge's
// instructions, challenge k's with its wires moved k blocks on, and
// places them in the first's levels.
func replicate(sys *constraint.System, r1c constraint.BlueprintID, challenges int, r replicaOf) {
	hintID := constraint.BlueprintID(len(sys.Blueprints)) // none
	for i, bp := range sys.Blueprints {
		if _, ok := bp.(*constraint.BlueprintGenericHint); ok {
			hintID = constraint.BlueprintID(i)
		}
	}
	nInstr := r.instr[1] - r.instr[0]
	nCD := r.calldata[1] - r.calldata[0]
	dPub, dSec, dInt := r.pub.hi-r.pub.lo, r.sec.hi-r.sec.lo, r.internal.hi-r.internal.lo

	instr := make([]constraint.PackedInstruction, len(sys.Instructions), len(sys.Instructions)+(challenges-1)*nInstr)
	copy(instr, sys.Instructions)
	instr = instr[:cap(instr)]
	cd := make([]uint32, len(sys.CallData), len(sys.CallData)+(challenges-1)*nCD)
	copy(cd, sys.CallData)
	cd = cd[:cap(cd)]
	first := sys.Instructions[r.instr[0]:r.instr[1]]
	firstCD := sys.CallData[r.calldata[0]:r.calldata[1]]

	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				uk := uint32(k)
				move := func(w uint32) uint32 {
					switch {
					case r.internal.has(w):
						return w + uk*dInt
					case r.sec.has(w):
						return w + uk*dSec
					case r.pub.has(w):
						return w + uk*dPub
					}
					return w
				}
				base := r.instr[1] + (k-1)*nInstr
				cdBase := r.calldata[1] + (k-1)*nCD
				out := cd[cdBase : cdBase+nCD]
				copy(out, firstCD)
				for i, pi := range first {
					pi.StartCallData += uint64(k * nCD)
					pi.ConstraintOffset += uk * uint32(r.constraints)
					pi.WireOffset += uk * dInt
					instr[base+i] = pi
					data := out[int(pi.StartCallData)-cdBase:]
					switch pi.BlueprintID {
					case r1c:
						n := int(data[1] + data[2] + data[3])
						for j := range n {
							data[4+2*j+1] = move(data[4+2*j+1])
						}
					case hintID:
						j := 3
						for range data[2] {
							n := int(data[j])
							j++
							for range n {
								data[j+1] = move(data[j+1])
								j += 2
							}
						}
						data[j] += uk * dInt
						data[j+1] += uk * dInt
					default:
						panic(fmt.Sprintf("porep: a challenge's instruction of blueprint %d", pi.BlueprintID))
					}
				}
			}
		}()
	}
	for k := 1; k < challenges; k++ {
		work <- k
	}
	close(work)
	wg.Wait()

	// levels: each level's first-challenge instructions, then every
	// copy's, after what the level held before the first challenge
	levels := make([][]uint32, len(sys.Levels))
	backing := make([]uint32, len(instr))
	at := 0
	for l, lv := range sys.Levels {
		split, _ := slices.BinarySearch(lv, uint32(r.instr[0]))
		n := len(lv) + (challenges-1)*(len(lv)-split)
		out := backing[at : at : at+n]
		at += n
		out = append(out, lv...)
		ch0 := lv[split:]
		for k := 1; k < challenges; k++ {
			off := uint32(k * nInstr)
			for _, id := range ch0 {
				out = append(out, id+off)
			}
		}
		levels[l] = out
	}
	sys.Instructions, sys.CallData, sys.Levels = instr, cd, levels
	sys.NbConstraints += (challenges - 1) * r.constraints
	sys.NbInternalVariables += (challenges - 1) * int(dInt)
}
