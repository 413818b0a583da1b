package circuits

import (
	"math/big"

	"github.com/consensys/gnark/constraint/solver"
)

// porep's gadgets, written once over the few operations gnark's r1cs
// builder offers (porepAPI) and run by three backends: gnark's frontend
// (Porep.Define), the direct builder (porep_direct.go, byte for byte the
// frontend's system) and a counter (porepCount: the shape without
// building). They follow bellperson's gadgets constraint for constraint
// (rust-fil-proofs' stacked circuit, notes/porep-shape.md): the same
// constant folding of bits, one constraint an XOR, AND, NOR, CH, two a
// MAJ, an addition's result bits each with its boolean constraint and
// the additions' equalities packed into one constraint per 254 bits
// (bellperson's MultiEq), a field element decomposed into 255 bits, and
// Poseidon as neptune's circuit: 3 constraints an S-box on an allocated
// input, 4 on a linear combination (the allocation first).
//
// Where gnark's API differs, the wire a constraint creates differs, not
// the count: bellperson's XOR allocates its result c, (2a)·b = a + b − c;
// here the product ab is the wire and a + b − 2ab a linear expression (a
// bit all the same). CH's wire is a·(b − c), which is −1 where a = 1,
// b = 0, c = 1 (bellperson allocates ch itself, a bit).

// porepAPI is what the gadgets need of a constraint builder. Every
// method does what gnark's r1cs builder does for it (frontend/cs/r1cs):
// the direct builder's byte test holds only if so.
type porepAPI[V any] interface {
	constant(c *big.Int) V
	add(vs ...V) V // at least one
	sub(a, b V) V
	mulConst(a V, c *big.Int) V
	// sum is Σ cs[i]·vs[i] (a nil coefficient is 1): the builder's Add of
	// its Muls by constants, in one pass
	sum(vs []V, cs []*big.Int) V
	mul(a, b V) V // one constraint, a new wire
	assertEqual(a, b V)
	assertBoolean(a V)
	hint(f solver.Hint, n int, in V) []V
}

// capacity is how many bits a packed equality or a packed number takes
// (bellperson's Fr::CAPACITY on BLS12-381, used on both curves: sums
// equal as integers stay equal mod the smaller BN254 r).
const capacity = 254

// fieldBits is how many bits a field element is decomposed into
// (BLS12-381's NUM_BITS; BN254's elements have a zero top bit).
const fieldBits = 255

// pbit is bellperson's Boolean: a constant, a boolean variable, or its
// negation.
type pbit[V any] struct {
	kind uint8 // bitConst, bitIs, bitNot
	c    bool
	v    V
}

const (
	bitConst = iota
	bitIs
	bitNot
)

type u32[V any] [32]pbit[V] // least significant bit first

// gadgets holds a builder and the constants its gadgets share.
type gadgets[V any] struct {
	api  porepAPI[V]
	p    *big.Int
	pow2 []*big.Int // 2^i, i < 600
	zero V
	one  V
	prm  porepParams
	// 1, 1, −2: x + y − 2xy
	xorCoeffs []*big.Int
}

func newGadgets[V any](api porepAPI[V], p *big.Int, prm porepParams) *gadgets[V] {
	g := &gadgets[V]{api: api, p: p, prm: prm}
	for i := range 600 {
		g.pow2 = append(g.pow2, new(big.Int).Lsh(big.NewInt(1), uint(i)))
	}
	g.xorCoeffs = []*big.Int{nil, nil, big.NewInt(-2)}
	g.zero = api.constant(big.NewInt(0))
	g.one = api.constant(big.NewInt(1))
	return g
}

func constBit[V any](b bool) pbit[V] { return pbit[V]{kind: bitConst, c: b} }
func isBit[V any](v V) pbit[V]       { return pbit[V]{kind: bitIs, v: v} }

func (b pbit[V]) not() pbit[V] {
	switch b.kind {
	case bitConst:
		return constBit[V](!b.c)
	case bitIs:
		b.kind = bitNot
	default:
		b.kind = bitIs
	}
	return b
}

func (b pbit[V]) isConst(c bool) bool { return b.kind == bitConst && b.c == c }

// lc is b as a linear expression.
func (g *gadgets[V]) lc(b pbit[V]) V {
	switch b.kind {
	case bitConst:
		if b.c {
			return g.one
		}
		return g.zero
	case bitIs:
		return b.v
	default:
		return g.api.sub(g.one, b.v)
	}
}

// xor is bellperson's Boolean::xor; two variables cost one constraint:
// p = x·y, x ⊕ y = x + y − 2p.
func (g *gadgets[V]) xor(a, b pbit[V]) pbit[V] {
	switch {
	case a.isConst(false):
		return b
	case b.isConst(false):
		return a
	case a.isConst(true):
		return b.not()
	case b.isConst(true):
		return a.not()
	case a.kind == bitIs && b.kind == bitNot:
		return g.xor(a, b.not()).not()
	case a.kind == bitNot && b.kind == bitIs:
		return g.xor(b, a.not()).not()
	}
	p := g.api.mul(a.v, b.v)
	return isBit(g.api.sum([]V{a.v, b.v, p}, g.xorCoeffs))
}

// and is bellperson's Boolean::and (AND, AND NOT, NOR: one constraint).
func (g *gadgets[V]) and(a, b pbit[V]) pbit[V] {
	switch {
	case a.isConst(false) || b.isConst(false):
		return constBit[V](false)
	case a.isConst(true):
		return b
	case b.isConst(true):
		return a
	case a.kind == bitIs && b.kind == bitNot:
		return isBit(g.api.mul(a.v, g.lc(b)))
	case a.kind == bitNot && b.kind == bitIs:
		return isBit(g.api.mul(b.v, g.lc(a)))
	case a.kind == bitNot && b.kind == bitNot:
		return isBit(g.api.mul(g.lc(a), g.lc(b)))
	}
	return isBit(g.api.mul(a.v, b.v))
}

// ch is bellperson's sha256_ch: (a ∧ b) ⊕ (¬a ∧ c), with its folding of
// constants; otherwise one constraint, ch = c + (b − c)·a.
func (g *gadgets[V]) ch(a, b, c pbit[V]) pbit[V] {
	switch {
	case a.kind == bitConst && b.kind == bitConst && c.kind == bitConst:
		return constBit[V]((a.c && b.c) != (!a.c && c.c))
	case a.isConst(false):
		return c
	case b.isConst(false):
		return g.and(a.not(), c)
	case c.isConst(false):
		return g.and(a, b)
	case c.isConst(true):
		return g.and(a, b.not()).not()
	case b.isConst(true):
		return g.and(a.not(), c.not()).not()
	}
	t := g.api.mul(g.api.sub(g.lc(b), g.lc(c)), g.lc(a))
	return isBit(g.api.add(g.lc(c), t))
}

// maj is bellperson's sha256_maj with its folding; otherwise two
// constraints: bc = b ∧ c, then maj = bc + (b + c − 2bc)·a.
func (g *gadgets[V]) maj(a, b, c pbit[V]) pbit[V] {
	switch {
	case a.kind == bitConst && b.kind == bitConst && c.kind == bitConst:
		n := 0
		for _, x := range []bool{a.c, b.c, c.c} {
			if x {
				n++
			}
		}
		return constBit[V](n >= 2)
	case a.isConst(false):
		return g.and(b, c)
	case b.isConst(false):
		return g.and(a, c)
	case c.isConst(false):
		return g.and(a, b)
	case c.isConst(true):
		return g.and(a.not(), b.not()).not()
	case b.isConst(true):
		return g.and(a.not(), c.not()).not()
	case a.isConst(true):
		return g.and(b.not(), c.not()).not()
	}
	bc := g.and(b, c)
	bcv := g.lc(bc)
	x := g.api.sum([]V{g.lc(b), g.lc(c), bcv}, g.xorCoeffs)
	p := g.api.mul(x, g.lc(a))
	return isBit(g.api.add(bcv, p))
}

func u32Const[V any](v uint32) u32[V] {
	var u u32[V]
	for i := range u {
		u[i] = constBit[V](v>>i&1 == 1)
	}
	return u
}

// u32FromBE is UInt32::from_bits_be.
func u32FromBE[V any](b []pbit[V]) u32[V] {
	var u u32[V]
	for i := range u {
		u[i] = b[31-i]
	}
	return u
}

func (u u32[V]) bitsBE() []pbit[V] {
	out := make([]pbit[V], 32)
	for i := range out {
		out[i] = u[31-i]
	}
	return out
}

func (u u32[V]) rotr(by int) u32[V] {
	var r u32[V]
	for i := range r {
		r[i] = u[(i+by)%32]
	}
	return r
}

func (u u32[V]) shr(by int) u32[V] {
	var r u32[V]
	for i := range r {
		if i+by < 32 {
			r[i] = u[i+by]
		} else {
			r[i] = constBit[V](false)
		}
	}
	return r
}

func (g *gadgets[V]) xor32(a, b u32[V]) u32[V] {
	var r u32[V]
	for i := range r {
		r[i] = g.xor(a[i], b[i])
	}
	return r
}

// multiEq is bellperson's MultiEq: equalities of sums of bits packed into
// one constraint while they fit in capacity bits (each side summed once,
// at the flush: the same expression as summed one equality at a time).
type multiEq[V any] struct {
	g        *gadgets[V]
	used     int
	lhs, rhs []V
	shift    []*big.Int
}

func (m *multiEq[V]) enforceEqual(nbits int, lhs, rhs V) {
	if capacity <= m.used+nbits {
		m.flush()
	}
	m.lhs, m.rhs = append(m.lhs, lhs), append(m.rhs, rhs)
	m.shift = append(m.shift, m.g.pow2[m.used])
	m.used += nbits
}

func (m *multiEq[V]) flush() {
	if m.used > 0 {
		m.shift[0] = nil // 2^0
		m.g.api.assertEqual(m.g.api.sum(m.lhs, m.shift), m.g.api.sum(m.rhs, m.shift))
	}
	m.used, m.lhs, m.rhs, m.shift = 0, m.lhs[:0], m.rhs[:0], m.shift[:0]
}

// addMany is UInt32::addmany: the sum's result bits from a hint, each
// with its boolean constraint, and the sum's equality in m; a sum of
// constants is a constant.
func (g *gadgets[V]) addMany(m *multiEq[V], ops ...u32[V]) u32[V] {
	var cval uint64
	var terms []V
	var coeffs []*big.Int
	for _, op := range ops {
		for i, b := range op {
			if b.kind == bitConst {
				if b.c {
					cval += 1 << i
				}
				continue
			}
			terms = append(terms, g.lc(b))
			coeffs = append(coeffs, g.pow2[i])
		}
	}
	if len(terms) == 0 {
		return u32Const[V](uint32(cval))
	}
	terms = append(terms, g.api.constant(new(big.Int).SetUint64(cval)))
	coeffs = append(coeffs, nil)
	sum := g.api.sum(terms, coeffs)
	nbits := bitLen(uint64(len(ops)) * 0xffffffff)
	res := g.api.hint(nBits, nbits, sum)
	for _, r := range res {
		g.api.assertBoolean(r)
	}
	m.enforceEqual(nbits, sum, g.api.sum(res, g.pow2[:nbits]))
	var u u32[V]
	for i := range u {
		u[i] = isBit(res[i])
	}
	return u
}

func bitLen(x uint64) int {
	n := 0
	for ; x != 0; x >>= 1 {
		n++
	}
	return n
}

// maybe is a deferred sum of sha256_compression_function: a and e are
// computed when first needed, with what the caller adds.
type maybe[V any] struct {
	concrete bool
	v        u32[V]
	ops      []u32[V]
}

func (g *gadgets[V]) compute(m *multiEq[V], x maybe[V], others ...u32[V]) u32[V] {
	if x.concrete {
		return x.v
	}
	return g.addMany(m, append(append([]u32[V](nil), x.ops...), others...)...)
}

// compression is sha256_compression_function with rounds rounds.
func (g *gadgets[V]) compression(block []pbit[V], cur [8]u32[V], rounds int) [8]u32[V] {
	w := make([]u32[V], 16, 64)
	for i := range w {
		w[i] = u32FromBE(block[32*i : 32*i+32])
	}
	m := &multiEq[V]{g: g}
	for i := 16; i < rounds; i++ {
		s0 := g.xor32(w[i-15].rotr(7), w[i-15].rotr(18))
		s0 = g.xor32(s0, w[i-15].shr(3))
		s1 := g.xor32(w[i-2].rotr(17), w[i-2].rotr(19))
		s1 = g.xor32(s1, w[i-2].shr(10))
		w = append(w, g.addMany(m, w[i-16], s0, w[i-7], s1))
	}
	a := maybe[V]{concrete: true, v: cur[0]}
	b, c, d := cur[1], cur[2], cur[3]
	e := maybe[V]{concrete: true, v: cur[4]}
	f, gg, h := cur[5], cur[6], cur[7]
	for i := range rounds {
		newE := g.compute(m, e)
		s1 := g.xor32(newE.rotr(6), newE.rotr(11))
		s1 = g.xor32(s1, newE.rotr(25))
		var ch u32[V]
		for j := range ch {
			ch[j] = g.ch(newE[j], f[j], gg[j])
		}
		temp1 := []u32[V]{h, s1, ch, u32Const[V](sha256K[i]), w[i]}
		newA := g.compute(m, a)
		s0 := g.xor32(newA.rotr(2), newA.rotr(13))
		s0 = g.xor32(s0, newA.rotr(22))
		var mj u32[V]
		for j := range mj {
			mj[j] = g.maj(newA[j], b[j], c[j])
		}
		h, gg, f = gg, f, newE
		e = maybe[V]{ops: append(append([]u32[V](nil), temp1...), d)}
		d, c, b = c, b, newA
		a = maybe[V]{ops: append(append([]u32[V](nil), temp1...), s0, mj)}
	}
	out := [8]u32[V]{
		g.compute(m, a, cur[0]),
		g.addMany(m, cur[1], b),
		g.addMany(m, cur[2], c),
		g.addMany(m, cur[3], d),
		g.compute(m, e, cur[4]),
		g.addMany(m, cur[5], f),
		g.addMany(m, cur[6], gg),
		g.addMany(m, cur[7], h),
	}
	m.flush()
	return out
}

// sha256 is bellperson's sha256 of whole bytes (its padding of constant
// bits): the digest's bits, most significant first.
func (g *gadgets[V]) sha256(in []pbit[V]) []pbit[V] {
	n := uint64(len(in))
	msg := append([]pbit[V](nil), in...)
	msg = append(msg, constBit[V](true))
	for (len(msg)+64)%512 != 0 {
		msg = append(msg, constBit[V](false))
	}
	for i := 63; i >= 0; i-- {
		msg = append(msg, constBit[V](n>>i&1 == 1))
	}
	var cur [8]u32[V]
	for i, v := range sha256IV {
		cur[i] = u32Const[V](v)
	}
	for i := 0; i < len(msg); i += 512 {
		cur = g.compression(msg[i:i+512], cur, g.prm.ShaRounds)
	}
	out := make([]pbit[V], 0, 256)
	for _, u := range cur {
		out = append(out, u.bitsBE()...)
	}
	return out
}

// toBits is AllocatedNum::to_bits_le: fieldBits bits from a hint, each
// with its boolean constraint, and their sum equal to x.
func (g *gadgets[V]) toBits(x V) []pbit[V] {
	res := g.api.hint(nBits, fieldBits, x)
	out := make([]pbit[V], len(res))
	for i, r := range res {
		g.api.assertBoolean(r)
		out[i] = isBit(r)
	}
	g.api.assertEqual(g.api.sum(res, g.pow2[:len(res)]), x)
	return out
}

// reverseBytes is reverse_bit_numbering: padded to whole bytes, each
// byte's bits reversed (little-endian bits to a byte stream's order).
func reverseBytes[V any](b []pbit[V]) []pbit[V] {
	b = append([]pbit[V](nil), b...)
	for len(b)%8 != 0 {
		b = append(b, constBit[V](false))
	}
	for i := 0; i < len(b); i += 8 {
		for j := range 4 {
			b[i+j], b[i+7-j] = b[i+7-j], b[i+j]
		}
	}
	return b
}

// alloc is a new wire equal to x (AllocatedNum::alloc and its equality,
// or neptune's ensure_allocated): a copy hint and one constraint x·1 = w.
func (g *gadgets[V]) alloc(x V) V {
	w := g.api.hint(porepCopy, 1, x)[0]
	g.api.assertEqual(x, w)
	return w
}

// pack is multipack::pack_bits: the first capacity bits, least
// significant first, as one new wire.
func (g *gadgets[V]) pack(b []pbit[V]) V {
	b = b[:min(len(b), capacity)]
	var terms []V
	var coeffs []*big.Int
	var cval big.Int
	for i, x := range b {
		switch x.kind {
		case bitConst:
			if x.c {
				cval.Add(&cval, g.pow2[i])
			}
		default:
			terms = append(terms, g.lc(x))
			coeffs = append(coeffs, g.pow2[i])
		}
	}
	terms = append(terms, g.api.constant(&cval))
	coeffs = append(coeffs, nil)
	return g.alloc(g.api.sum(terms, coeffs))
}

// sum2 is Σ 2^i·x_i of boolean variables.
func (g *gadgets[V]) sum2(xs []V) V { return g.api.sum(xs, g.pow2[:len(xs)]) }

// poseidon is neptune's poseidon_hash of in, at width len(in)+1: the
// first round's S-boxes on in plus its constants (3 constraints each, the
// tag's a constant), every later S-box on a linear combination allocated
// first (4), the output allocated (1); full rounds mix by a dense matrix,
// partial ones by a sparse one as neptune's do (each element's linear
// combination grows by a term a round, not by the whole state).
func (g *gadgets[V]) poseidon(in []V) V {
	t := len(in) + 1
	rp := g.prm.PoseidonRP
	if rp == 0 {
		rp = poseidonRP(t)
	}
	c := poseidonFor(g.p, t, g.prm.PoseidonRF, rp)
	api := g.api
	state := make([]V, t)
	tag := new(big.Int).Add(c.tag, c.rc[0][0])
	tag.Exp(tag, big.NewInt(5), g.p)
	state[0] = api.constant(tag)
	for j, x := range in {
		y := api.add(x, api.constant(c.rc[0][j+1]))
		y2 := api.mul(y, y)
		y4 := api.mul(y2, y2)
		state[j+1] = api.mul(y, y4)
	}
	sbox := func(x V) V {
		w := g.alloc(x)
		w2 := api.mul(w, w)
		w4 := api.mul(w2, w2)
		return api.mul(w, w4)
	}
	half := c.rf / 2
	for r := range c.rf + c.rp {
		full := r < half || r >= half+c.rp
		if r > 0 {
			for j := range state {
				state[j] = api.add(state[j], api.constant(c.rc[r][j]))
				if full || j == 0 {
					state[j] = sbox(state[j])
				}
			}
		}
		next := make([]V, t)
		if full {
			for i := range next {
				next[i] = api.sum(state, c.mds[i])
			}
		} else {
			w, v := c.w[r-half], c.v[r-half]
			next[0] = api.sum(state, w)
			for j := 1; j < t; j++ {
				next[j] = api.sum([]V{state[j], state[0]}, []*big.Int{nil, v[j]})
			}
		}
		state = next
	}
	return g.alloc(state[1])
}

// pick is insertion.rs's pick: cond ? a : b, one constraint
// (a − b)·cond = w, b + w.
func (g *gadgets[V]) pick(cond, a, b V) V {
	w := g.api.mul(g.api.sub(a, b), cond)
	return g.api.add(b, w)
}

// insert8 is insertion.rs's insert_8: cur at position b0 + 2b1 + 4b2
// among the 7 siblings, 22 constraints.
func (g *gadgets[V]) insert8(cur V, bs []V, sib []V) []V {
	api := g.api
	b0, b1, b2 := bs[0], bs[1], bs[2]
	nor := api.mul(api.sub(g.one, b0), api.sub(g.one, b1))
	and := api.mul(b0, b1)
	a, b, c, d, e, f, gg, h := cur, sib[0], sib[1], sib[2], sib[3], sib[4], sib[5], sib[6]
	p0 := g.pick(b2, b, g.pick(nor, a, b))
	p1 := g.pick(b2, c, g.pick(b1, c, g.pick(b0, a, b)))
	p2 := g.pick(b2, d, g.pick(b1, g.pick(b0, d, a), c))
	p3 := g.pick(b2, e, g.pick(and, a, d))
	p4 := g.pick(b2, g.pick(nor, a, f), e)
	p5 := g.pick(b2, g.pick(b1, gg, g.pick(b0, a, f)), f)
	p6 := g.pick(b2, g.pick(b1, g.pick(b0, h, a), gg), gg)
	p7 := g.pick(b2, g.pick(and, a, h), h)
	return []V{p0, p1, p2, p3, p4, p5, p6, p7}
}

// octPath is PoRCircuit over an arity-8 Poseidon tree (private root):
// per level 3 index bits (boolean), 7 siblings, insert_8 and a hash; the
// index bits packed into a public input, the root equal to root.
func (g *gadgets[V]) octPath(leaf V, idx, sib []V, root, public V) {
	cur := leaf
	for l := range len(idx) / 3 {
		bs := idx[3*l : 3*l+3]
		for _, b := range bs {
			g.api.assertBoolean(b)
		}
		cur = g.poseidon(g.insert8(cur, bs, sib[7*l:7*l+7]))
	}
	g.api.assertEqual(g.sum2(idx), public)
	g.api.assertEqual(cur, root)
}

// shaNode is filecoin-hashers' Sha256 hash_multi_leaf_circuit of two
// field elements: each to 255 bits and a zero, bytes little-endian, then
// SHA-256 (two blocks) packed to 254 bits.
func (g *gadgets[V]) shaNode(l, r V) V {
	var in []pbit[V]
	for _, x := range []V{l, r} {
		in = append(in, reverseBytes(g.toBits(x))...)
	}
	return g.pack(reverseBytes(g.sha256(in)))
}

// binPath is PoRCircuit over tree D (binary, SHA-256): per level an
// index bit, a sibling, insert_2 and shaNode.
func (g *gadgets[V]) binPath(leaf V, idx, sib []V, root, public V) {
	cur := leaf
	for l, b := range idx {
		g.api.assertBoolean(b)
		left := g.pick(b, sib[l], cur)
		right := g.pick(b, cur, sib[l])
		cur = g.shaNode(left, right)
	}
	g.api.assertEqual(g.sum2(idx), public)
	g.api.assertEqual(cur, root)
}

// label is create_label_circuit: SHA-256 of the replica id (32 bytes),
// the layer (4 bytes) and node (8 bytes) big-endian, zeros to 64 bytes,
// then each parent's 32 bytes; packed to 254 bits.
func (g *gadgets[V]) label(replica []pbit[V], parents [][]pbit[V], layer uint32, node []pbit[V]) V {
	in := append([]pbit[V](nil), replica...)
	for len(in) < 256 {
		in = append(in, constBit[V](false))
	}
	in = append(in, u32Const[V](layer).bitsBE()...)
	for i := 63; i >= 0; i-- {
		in = append(in, node[i])
	}
	for len(in) < 512 {
		in = append(in, constBit[V](false))
	}
	for _, p := range parents {
		in = append(in, p...)
		for len(in)%256 != 0 {
			in = append(in, constBit[V](false))
		}
	}
	return g.pack(reverseBytes(g.sha256(in)))
}
