package circuits

import (
	"fmt"
	"math/big"
	"sync"

	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/zkpipe/zkpipe/curve"
)

// Porep is shaped as one partition of Filecoin's 32 GiB PoRep C2 proof
// (rust-fil-proofs' StackedCircuit, stacked DRG; notes/porep-shape.md),
// with bellperson's gadgets constraint for constraint (porep_gadgets.go).
// Per challenge: the data leaf's path in tree D (binary, SHA-256 of two
// decomposed field elements a level), each parent's column of labels
// hashed (Poseidon of arity Layers) and its path in tree C (arity 8,
// Poseidon), the challenge's 64 bits, then for each layer the parents'
// labels decomposed into bits and the node's label derived (SHA-256 over
// the replica id, layer, node and Parents parents), the last label plus
// the data leaf (the encoding) in tree R, and the labels' column in tree
// C. Public: the replica id, comm_d, comm_r = H(comm_c, comm_r_last), and
// per challenge each path's index and the challenge, as upstream's
// public inputs are.
//
// At 2^27 it is 18 challenges of the real partition's parameters (11
// layers, 6 + 8 parents, 37 hashed, 30 levels of D, 10 of C), 130M
// constraints; a smaller size takes fewer challenges, then smaller ones
// (porepLadder).
type Porep struct {
	ReplicaID frontend.Variable `gnark:",public"`
	CommD     frontend.Variable `gnark:",public"`
	CommR     frontend.Variable `gnark:",public"`
	CommRLast frontend.Variable
	CommC     frontend.Variable
	Ch        []PorepChallenge
	Params    porepParams `gnark:"-"`
}

// PorepChallenge is one challenge's inputs.
type PorepChallenge struct {
	DPath      frontend.Variable   `gnark:",public"` // the data leaf's index in D
	ParentPath []frontend.Variable `gnark:",public"` // each parent's index in C
	Node       frontend.Variable   `gnark:",public"` // the challenged node
	RPath      frontend.Variable   `gnark:",public"` // the node's index in R
	CPath      frontend.Variable   `gnark:",public"` // the node's column's index in C
	DataLeaf   frontend.Variable
	DIndex     []frontend.Variable // bits, leaf first
	DSib       []frontend.Variable
	Parents    []PorepColumn // DRG parents, then expander parents
	NodeBits   []frontend.Variable
	RIndex     []frontend.Variable // 3 bits a level
	RSib       []frontend.Variable // 7 siblings a level
	CIndex     []frontend.Variable
	CSib       []frontend.Variable
}

// PorepColumn is a parent's column: its label in each layer and the
// column hash's path in tree C.
type PorepColumn struct {
	Rows  []frontend.Variable
	Index []frontend.Variable
	Sib   []frontend.Variable
}

// porepParams is one challenge's shape.
type porepParams struct {
	Layers     int // labels a challenge; the column hashes' arity (≤ 11)
	Drg, Exp   int // parents: DRG (every layer) and expander (after the first)
	Parents    int // parents hashed a label, the list repeated (37)
	DDepth     int // levels of tree D (binary, SHA-256)
	CDepth     int // levels of trees C and R (arity 8, Poseidon)
	ShaRounds  int // rounds a SHA-256 compression (64)
	PoseidonRF int // full rounds (8)
	PoseidonRP int // partial rounds; 0: neptune's for the width
}

// porepFull is a challenge of the 32 GiB partition.
var porepFull = porepParams{Layers: 11, Drg: 6, Exp: 8, Parents: 37, DDepth: 30, CDepth: 10, ShaRounds: 64, PoseidonRF: 8}

// porepLadder is the challenge shapes, largest first, each about half
// the one before: a size takes as many challenges of the largest shape
// that fits as fit, the mix of SHA-256 and Poseidon kept (labels about
// four fifths, tree D most of the rest) down to one challenge of a few
// thousand constraints, where SHA-256 and Poseidon run fewer rounds.
var porepLadder = []porepParams{
	porepFull,
	{Layers: 11, Drg: 6, Exp: 8, Parents: 17, DDepth: 15, CDepth: 10, ShaRounds: 64, PoseidonRF: 8},
	{Layers: 11, Drg: 6, Exp: 8, Parents: 7, DDepth: 8, CDepth: 8, ShaRounds: 64, PoseidonRF: 8},
	{Layers: 6, Drg: 6, Exp: 8, Parents: 7, DDepth: 4, CDepth: 6, ShaRounds: 64, PoseidonRF: 8},
	{Layers: 3, Drg: 3, Exp: 4, Parents: 7, DDepth: 2, CDepth: 4, ShaRounds: 64, PoseidonRF: 8},
	{Layers: 2, Drg: 2, Exp: 2, Parents: 3, DDepth: 2, CDepth: 3, ShaRounds: 64, PoseidonRF: 8},
	{Layers: 1, Drg: 2, Exp: 1, Parents: 3, DDepth: 1, CDepth: 2, ShaRounds: 64, PoseidonRF: 8},
	{Layers: 1, Drg: 1, Exp: 1, Parents: 1, DDepth: 1, CDepth: 1, ShaRounds: 64, PoseidonRF: 8},
	{Layers: 1, Drg: 1, Exp: 1, Parents: 1, DDepth: 1, CDepth: 1, ShaRounds: 32, PoseidonRF: 8, PoseidonRP: 28},
	{Layers: 1, Drg: 1, Exp: 1, Parents: 1, DDepth: 1, CDepth: 1, ShaRounds: 16, PoseidonRF: 8, PoseidonRP: 14},
	{Layers: 1, Drg: 1, Exp: 0, Parents: 1, DDepth: 1, CDepth: 1, ShaRounds: 8, PoseidonRF: 8, PoseidonRP: 7},
	{Layers: 1, Drg: 1, Exp: 0, Parents: 1, DDepth: 1, CDepth: 1, ShaRounds: 4, PoseidonRF: 4, PoseidonRP: 4},
	{Layers: 1, Drg: 1, Exp: 0, Parents: 1, DDepth: 1, CDepth: 1, ShaRounds: 1, PoseidonRF: 2, PoseidonRP: 1},
}

// porepCost is what a shape's challenge and the partition's globals
// make, counted by running the gadgets on porepCount.
type porepCost struct {
	constraints, wires int // internal wires
	hints              int
}

var porepCosts sync.Map // porepParams → [2]porepCost{globals, challenge}

func (prm porepParams) costs() (globals, challenge porepCost) {
	if c, ok := porepCosts.Load(prm); ok {
		cc := c.([2]porepCost)
		return cc[0], cc[1]
	}
	var cnt porepCount
	g := newGadgets[countV](&cnt, curve.BN254.ECC().ScalarField(), prm)
	c := newPorep(prm, 1)
	fill(c, countV{})
	st := g.globals(c)
	globals = porepCost{cnt.constraints, cnt.wires, cnt.hints}
	g.challenge(st, &c.Ch[0])
	challenge = porepCost{cnt.constraints - globals.constraints, cnt.wires - globals.wires, cnt.hints - globals.hints}
	porepCosts.Store(prm, [2]porepCost{globals, challenge})
	return globals, challenge
}

// porepPlan is the shape and challenges porep has at about n
// constraints: the largest shape with a challenge that fits, as many of
// its challenges as fit (only the largest shape takes more than one: the
// ladder's steps are at most 2×). ok is false below the smallest.
func porepPlan(n int) (prm porepParams, challenges int, ok bool) {
	for _, prm := range porepLadder {
		g, c := prm.costs()
		if k := (n - g.constraints) / c.constraints; k >= 1 {
			return prm, min(k, prm.maxChallenges()), true
		}
	}
	return porepLadder[len(porepLadder)-1], 1, false
}

// maxChallenges is how many challenges the shape's trees hold: tree C
// holds each one's parents and its column, R its node, D its leaf.
func (prm porepParams) maxChallenges() int {
	c := 1 << min(60, 3*prm.CDepth)
	return min(c/(prm.Drg+prm.Exp+1), 1<<min(60, prm.DDepth))
}

// porepMin is the fewest constraints porep takes.
func porepMin() int {
	g, c := porepLadder[len(porepLadder)-1].costs()
	return g.constraints + c.constraints
}

// newPorep is a Porep of challenges challenges of shape prm, its slices
// made.
func newPorep(prm porepParams, challenges int) *Porep {
	c := &Porep{Params: prm, Ch: make([]PorepChallenge, challenges)}
	for k := range c.Ch {
		ch := &c.Ch[k]
		ch.ParentPath = make([]frontend.Variable, prm.Drg+prm.Exp)
		ch.DIndex = make([]frontend.Variable, prm.DDepth)
		ch.DSib = make([]frontend.Variable, prm.DDepth)
		ch.Parents = make([]PorepColumn, prm.Drg+prm.Exp)
		for j := range ch.Parents {
			ch.Parents[j] = PorepColumn{
				Rows:  make([]frontend.Variable, prm.Layers),
				Index: make([]frontend.Variable, 3*prm.CDepth),
				Sib:   make([]frontend.Variable, 7*prm.CDepth),
			}
		}
		ch.NodeBits = make([]frontend.Variable, 64)
		ch.RIndex = make([]frontend.Variable, 3*prm.CDepth)
		ch.RSib = make([]frontend.Variable, 7*prm.CDepth)
		ch.CIndex = make([]frontend.Variable, 3*prm.CDepth)
		ch.CSib = make([]frontend.Variable, 7*prm.CDepth)
	}
	return c
}

// porepInputs is how many public (less the one wire) and secret inputs a
// Porep of challenges challenges of shape prm has.
func porepInputs(prm porepParams, challenges int) (public, secret int) {
	parents := prm.Drg + prm.Exp
	public = 3 + challenges*(parents+4)
	perCh := 1 + 2*prm.DDepth + parents*(prm.Layers+10*prm.CDepth) + 64 + 2*10*prm.CDepth
	return public, 2 + challenges*perCh
}

func (c *Porep) Define(api frontend.API) error {
	g := newGadgets[frontend.Variable](frontendPorep{api}, api.Compiler().Field(), c.Params)
	st := g.globals(c)
	for k := range c.Ch {
		g.challenge(st, &c.Ch[k])
	}
	return nil
}

// porepGlobals is what every challenge uses.
type porepGlobals[V any] struct {
	replica                 []pbit[V]
	commD, commC, commRLast V
}

func as[V any](x frontend.Variable) V { return x.(V) }

func asAll[V any](xs []frontend.Variable) []V {
	out := make([]V, len(xs))
	for i, x := range xs {
		out[i] = x.(V)
	}
	return out
}

// globals is StackedCircuit::synthesize before its challenges: the
// replica id's bits, comm_r = H(comm_c, comm_r_last).
func (g *gadgets[V]) globals(c *Porep) porepGlobals[V] {
	st := porepGlobals[V]{
		replica:   reverseBytes(g.toBits(as[V](c.ReplicaID))),
		commD:     as[V](c.CommD),
		commC:     as[V](c.CommC),
		commRLast: as[V](c.CommRLast),
	}
	h := g.poseidon([]V{st.commC, st.commRLast})
	g.api.assertEqual(h, as[V](c.CommR))
	return st
}

// challenge is params.rs's Proof::synthesize for one challenge.
func (g *gadgets[V]) challenge(st porepGlobals[V], ch *PorepChallenge) {
	prm := g.prm
	leaf := as[V](ch.DataLeaf)
	g.binPath(leaf, asAll[V](ch.DIndex), asAll[V](ch.DSib), st.commD, as[V](ch.DPath))
	rows := make([][]V, len(ch.Parents))
	for j, col := range ch.Parents {
		rows[j] = asAll[V](col.Rows)
		g.octPath(g.poseidon(rows[j]), asAll[V](col.Index), asAll[V](col.Sib), st.commC, as[V](ch.ParentPath[j]))
	}
	nodeVs := asAll[V](ch.NodeBits)
	node := make([]pbit[V], len(nodeVs))
	for i, b := range nodeVs {
		g.api.assertBoolean(b)
		node[i] = isBit(b)
	}
	g.api.assertEqual(g.sum2(nodeVs), as[V](ch.Node))
	labels := make([]V, prm.Layers)
	for layer := 1; layer <= prm.Layers; layer++ {
		var parents [][]pbit[V]
		for j := range prm.Drg {
			parents = append(parents, reverseBytes(g.toBits(rows[j][layer-1])))
		}
		if layer > 1 {
			for j := prm.Drg; j < prm.Drg+prm.Exp; j++ {
				parents = append(parents, reverseBytes(g.toBits(rows[j][layer-2])))
			}
		}
		expanded := make([][]pbit[V], prm.Parents)
		for i := range expanded {
			expanded[i] = parents[i%len(parents)]
		}
		labels[layer-1] = g.label(st.replica, expanded, uint32(layer), node)
	}
	enc := g.alloc(g.api.add(labels[prm.Layers-1], leaf))
	g.octPath(enc, asAll[V](ch.RIndex), asAll[V](ch.RSib), st.commRLast, as[V](ch.RPath))
	g.octPath(g.poseidon(labels), asAll[V](ch.CIndex), asAll[V](ch.CSib), st.commC, as[V](ch.CPath))
}

// frontendPorep is porepAPI on gnark's frontend.
type frontendPorep struct{ api frontend.API }

func (f frontendPorep) constant(c *big.Int) frontend.Variable { return new(big.Int).Set(c) }

func (f frontendPorep) add(vs ...frontend.Variable) frontend.Variable {
	if len(vs) == 1 {
		return vs[0]
	}
	return f.api.Add(vs[0], vs[1], vs[2:]...)
}

func (f frontendPorep) sub(a, b frontend.Variable) frontend.Variable { return f.api.Sub(a, b) }

func (f frontendPorep) mulConst(a frontend.Variable, c *big.Int) frontend.Variable {
	return f.api.Mul(a, c)
}

func (f frontendPorep) sum(vs []frontend.Variable, cs []*big.Int) frontend.Variable {
	terms := make([]frontend.Variable, len(vs))
	for i, v := range vs {
		if cs[i] == nil {
			terms[i] = v
		} else {
			terms[i] = f.api.Mul(v, cs[i])
		}
	}
	return f.add(terms...)
}

func (f frontendPorep) mul(a, b frontend.Variable) frontend.Variable { return f.api.Mul(a, b) }
func (f frontendPorep) assertEqual(a, b frontend.Variable)           { f.api.AssertIsEqual(a, b) }
func (f frontendPorep) assertBoolean(a frontend.Variable)            { f.api.AssertIsBoolean(a) }

func (f frontendPorep) hint(h solver.Hint, n int, in frontend.Variable) []frontend.Variable {
	out, err := f.api.Compiler().NewHint(h, n, in)
	if err != nil {
		panic(err)
	}
	return out
}

// countV is porepCount's variable: whether it is a constant.
type countV struct{ konst bool }

// porepCount is porepAPI counting constraints and wires, for a shape
// without building it.
type porepCount struct{ constraints, wires, hints int }

func (c *porepCount) constant(*big.Int) countV { return countV{true} }

func (c *porepCount) add(vs ...countV) countV {
	for _, v := range vs {
		if !v.konst {
			return countV{}
		}
	}
	return countV{true}
}

func (c *porepCount) sub(a, b countV) countV               { return c.add(a, b) }
func (c *porepCount) mulConst(a countV, _ *big.Int) countV { return a }
func (c *porepCount) sum(vs []countV, _ []*big.Int) countV { return c.add(vs...) }

func (c *porepCount) mul(a, b countV) countV {
	if a.konst || b.konst {
		return countV{a.konst && b.konst}
	}
	c.constraints++
	c.wires++
	return countV{}
}

func (c *porepCount) assertEqual(a, b countV) {
	if !a.konst || !b.konst {
		c.constraints++
	}
}

func (c *porepCount) assertBoolean(a countV) {
	if !a.konst {
		c.constraints++
	}
}

func (c *porepCount) hint(_ solver.Hint, n int, _ countV) []countV {
	c.hints++
	c.wires += n
	return make([]countV, n)
}

// fill sets every input of c to v.
func fill[V any](c *Porep, v V) {
	set := func(xs []frontend.Variable) {
		for i := range xs {
			xs[i] = v
		}
	}
	c.ReplicaID, c.CommD, c.CommR, c.CommRLast, c.CommC = v, v, v, v, v
	for k := range c.Ch {
		ch := &c.Ch[k]
		ch.DPath, ch.Node, ch.RPath, ch.CPath, ch.DataLeaf = v, v, v, v, v
		for _, xs := range [][]frontend.Variable{ch.ParentPath, ch.DIndex, ch.DSib, ch.NodeBits, ch.RIndex, ch.RSib, ch.CIndex, ch.CSib} {
			set(xs)
		}
		for j := range ch.Parents {
			set(ch.Parents[j].Rows)
			set(ch.Parents[j].Index)
			set(ch.Parents[j].Sib)
		}
	}
}

// porepCopy is the hint that allocates a wire equal to a linear
// expression (bellperson's AllocatedNum::alloc of a value it computed).
func porepCopy(_ *big.Int, in, out []*big.Int) error {
	if len(in) != 1 || len(out) != 1 {
		return fmt.Errorf("porepCopy: %d inputs and %d outputs, want 1 and 1", len(in), len(out))
	}
	out[0].Set(in[0])
	return nil
}

func init() { solver.RegisterHint(porepCopy) }

// porepShape is Porep's shape at about n constraints.
func porepShape(n int) Shape {
	prm, k, _ := porepPlan(n)
	g, c := prm.costs()
	pub, sec := porepInputs(prm, k)
	return Shape{Public: pub, Secret: sec, Constraints: g.constraints + k*c.constraints}
}

var porepCircuit = Builtin{
	Name: "porep",
	Doc:  "shaped as a Filecoin 32 GiB PoRep C2 partition: SHA-256 bit by bit, Poseidon Merkle paths",
	min:  porepMin,
	circuit: func(n int) frontend.Circuit {
		prm, k, _ := porepPlan(n)
		return newPorep(prm, k)
	},
	assign: func(id curve.ID, n int, seed int64) frontend.Circuit {
		prm, k, _ := porepPlan(n)
		return porepAssign(id, prm, k, seed)
	},
	floor: func(n int) (int, int) {
		prm, k, _ := porepPlan(n)
		g, c := prm.costs()
		pub, sec := porepInputs(prm, k)
		return g.constraints + k*c.constraints, 1 + pub + sec + g.wires + k*c.wires
	},
	shape: porepShape,
	direct: func(id curve.ID, n int) (constraint.ConstraintSystem, error) {
		prm, k, _ := porepPlan(n)
		return buildPorep(id, prm, k)
	},
	compileOptions: []frontend.CompileOption{frontend.WithCompressThreshold(0)},
}
