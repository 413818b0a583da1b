package circuits

import (
	"encoding/binary"
	"math/big"
	"math/rand"
	"slices"

	"github.com/consensys/gnark/frontend"
	"github.com/zkpipe/zkpipe/curve"
)

// porepAssign is a satisfying assignment of a Porep drawn from seed: the
// secret inputs a prover holds (the replica id, the parents' columns,
// the data leaves, the nodes' positions, the trees' siblings off the
// opened paths) are drawn; the labels, column hashes, trees and public
// inputs follow from them, computed natively as the circuit does. The
// trees are sparse: each level's nodes on an opened path are hashed from
// their children, a child on no opened path drawn.
func porepAssign(id curve.ID, prm porepParams, challenges int, seed int64) *Porep {
	p := modulus(id)
	rng := rand.New(rand.NewSource(seed))
	rnd := func() *big.Int { return new(big.Int).Rand(rng, p) }
	c := newPorep(prm, challenges)
	replica := rnd()
	c.ReplicaID = replica

	rp := func(t int) int {
		if prm.PoseidonRP != 0 {
			return prm.PoseidonRP
		}
		return poseidonRP(t)
	}
	hashOf := func(in []*big.Int) *big.Int {
		return poseidonHash(poseidonFor(p, len(in)+1, prm.PoseidonRF, rp(len(in)+1)), p, in)
	}
	shaNode := func(in []*big.Int) *big.Int {
		return fromDigest(sha256Rounds(append(leBytes32(in[0]), leBytes32(in[1])...), prm.ShaRounds), p)
	}
	cWidth := uint64(1) << (3 * prm.CDepth)
	dWidth := uint64(1) << prm.DDepth
	parents := prm.Drg + prm.Exp
	treeC := newSparseTree(8, prm.CDepth, hashOf)
	treeR := newSparseTree(8, prm.CDepth, hashOf)
	treeD := newSparseTree(2, prm.DDepth, shaNode)
	type opened struct {
		tree *sparseTree
		pos  uint64
	}
	type chOpen struct {
		d, r, cx opened
		parents  []opened
	}
	opens := make([]chOpen, challenges)
	for k := range c.Ch {
		ch := &c.Ch[k]
		op := &opens[k]
		leaf := rnd()
		ch.DataLeaf = leaf
		op.d = opened{treeD, treeD.place(rng, dWidth, leaf)}
		rows := make([][]*big.Int, parents)
		for j := range rows {
			rows[j] = make([]*big.Int, prm.Layers)
			for l := range rows[j] {
				rows[j][l] = rnd()
				ch.Parents[j].Rows[l] = rows[j][l]
			}
			op.parents = append(op.parents, opened{treeC, treeC.place(rng, cWidth, hashOf(rows[j]))})
		}
		node := rng.Uint64()
		ch.Node = new(big.Int).SetUint64(node)
		for i := range ch.NodeBits {
			ch.NodeBits[i] = node >> i & 1
		}
		labels := make([]*big.Int, prm.Layers)
		for layer := 1; layer <= prm.Layers; layer++ {
			var ps []*big.Int
			for j := range prm.Drg {
				ps = append(ps, rows[j][layer-1])
			}
			if layer > 1 {
				for j := prm.Drg; j < parents; j++ {
					ps = append(ps, rows[j][layer-2])
				}
			}
			msg := leBytes32(replica)
			msg = binary.BigEndian.AppendUint32(msg, uint32(layer))
			msg = binary.BigEndian.AppendUint64(msg, node)
			msg = append(msg, make([]byte, 64-len(msg))...)
			for i := range prm.Parents {
				msg = append(msg, leBytes32(ps[i%len(ps)])...)
			}
			labels[layer-1] = fromDigest(sha256Rounds(msg, prm.ShaRounds), p)
		}
		enc := new(big.Int).Add(labels[prm.Layers-1], leaf)
		op.r = opened{treeR, treeR.place(rng, cWidth, enc.Mod(enc, p))}
		op.cx = opened{treeC, treeC.place(rng, cWidth, hashOf(labels))}
	}
	for _, t := range []*sparseTree{treeC, treeR, treeD} {
		t.build(rnd)
	}
	c.CommC, c.CommRLast, c.CommD = treeC.root(), treeR.root(), treeD.root()
	c.CommR = hashOf([]*big.Int{treeC.root(), treeR.root()})
	for k := range c.Ch {
		ch := &c.Ch[k]
		op := opens[k]
		ch.DPath = op.d.pos
		op.d.tree.path(op.d.pos, ch.DIndex, ch.DSib)
		for j := range ch.Parents {
			ch.ParentPath[j] = op.parents[j].pos
			op.parents[j].tree.path(op.parents[j].pos, ch.Parents[j].Index, ch.Parents[j].Sib)
		}
		ch.RPath = op.r.pos
		op.r.tree.path(op.r.pos, ch.RIndex, ch.RSib)
		ch.CPath = op.cx.pos
		op.cx.tree.path(op.cx.pos, ch.CIndex, ch.CSib)
	}
	return c
}

// sparseTree is a Merkle tree of which only the opened leaves' paths
// are computed.
type sparseTree struct {
	arity, depth int
	hash         func([]*big.Int) *big.Int
	levels       []map[uint64]*big.Int // level 0 the leaves
}

func newSparseTree(arity, depth int, hash func([]*big.Int) *big.Int) *sparseTree {
	t := &sparseTree{arity: arity, depth: depth, hash: hash}
	for range depth + 1 {
		t.levels = append(t.levels, map[uint64]*big.Int{})
	}
	return t
}

// place puts leaf at a position drawn in [0, width) that holds no leaf
// yet (the shapes' trees hold every leaf a partition opens).
func (t *sparseTree) place(rng *rand.Rand, width uint64, leaf *big.Int) uint64 {
	for {
		pos := rng.Uint64() % width
		if _, taken := t.levels[0][pos]; !taken {
			t.levels[0][pos] = leaf
			return pos
		}
	}
}

// build hashes each level's opened nodes up from the leaves, drawing the
// children on no opened path (in order of position: one seed, one tree).
func (t *sparseTree) build(rnd func() *big.Int) {
	a := uint64(t.arity)
	for l := range t.depth {
		var parents []uint64
		for pos := range t.levels[l] {
			if q := pos / a; !slices.Contains(parents, q) {
				parents = append(parents, q)
			}
		}
		slices.Sort(parents)
		for _, q := range parents {
			children := make([]*big.Int, a)
			for i := range children {
				pos := q*a + uint64(i)
				x, ok := t.levels[l][pos]
				if !ok {
					x = rnd()
					t.levels[l][pos] = x
				}
				children[i] = x
			}
			t.levels[l+1][q] = t.hash(children)
		}
	}
}

func (t *sparseTree) root() *big.Int { return t.levels[t.depth][0] }

// path writes the index bits (least significant first, log2(arity) a
// level) and siblings (arity−1 a level, in order) of the leaf at pos.
func (t *sparseTree) path(pos uint64, index, sib []frontend.Variable) {
	a := uint64(t.arity)
	nb := 0
	for 1<<nb < t.arity {
		nb++
	}
	for l := range t.depth {
		slot := pos % a
		for i := range nb {
			index[l*nb+i] = slot >> i & 1
		}
		s := 0
		for i := range a {
			if i != slot {
				sib[l*(t.arity-1)+s] = t.levels[l][pos-slot+i]
				s++
			}
		}
		pos /= a
	}
}
