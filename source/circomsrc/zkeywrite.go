package circomsrc

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"unsafe"

	"github.com/zkpipe/zkpipe/proofdata"
	"golang.org/x/crypto/blake2b"
)

// ─── writing a zkey ──────────────────────────────────────────────────────────
//
// A zkey is written as snarkjs 0.7's zkey_new (src/zkey_new.js, what
// `snarkjs groth16 setup` runs) writes one: the container's ten sections
// in the order it writes them,
//
//	1 header, 2 Groth16 header, 4 coefficients, 3 IC, 9 H, 8 C, 5 A,
//	6 B1, 7 B2, 10 contributions (the circuit hash, then 0 contributions)
//
// so that the key zkpipe derives from a .ptau is snarkjs's byte for byte.
// The layout of each section is Zkey's (zkey.go).

// ZkeyDomainSize is the domain snarkjs's groth16 setup gives r: 2^k for
// k = ⌊log₂(m + nPublic)⌋ + 1, m constraints, the least power of two
// that holds the constraints, a row binding each public input and the
// one wire's row. It is an error past the largest domain a zkey of r's
// curve can have here (maxLogDomain).
func (r *R1CS) ZkeyDomainSize() (int, error) {
	v := uint64(len(r.Constraints) + r.NPublic())
	k := max(1, bits.Len64(v)) // snarkjs's log2(0) is 0
	if k > maxLogDomain(r.Curve) {
		return 0, fmt.Errorf("%d constraints and %d public inputs need a domain of 2^%d; a %s zkey has at most 2^%d", len(r.Constraints), r.NPublic(), k, r.Curve, maxLogDomain(r.Curve))
	}
	return 1 << k, nil
}

// ZkeyCoefs is the coefficient section snarkjs derives from r: each
// constraint's A terms, then its B terms, as the r1cs lists them (its
// row is the constraint's index), and then an A row binding each public
// wire and the one wire: row m + i, wire i, coefficient 1, for i ≤
// nPublic. Values are Montgomery forms of Fr, as Coefs holds them.
func (r *R1CS) ZkeyCoefs() [2]Coefs {
	var co [2]Coefs
	nA, nB := r.NPublic()+1, 0
	for i := range r.Constraints {
		nA += len(r.Constraints[i].A)
		nB += len(r.Constraints[i].B)
	}
	for m, n := range [2]int{nA, nB} {
		co[m] = Coefs{Row: make([]uint32, 0, n), Wire: make([]uint32, 0, n), Value: make([]proofdata.Scalar, 0, n)}
	}
	add := func(c *Coefs, row int, t Term) {
		c.Row, c.Wire, c.Value = append(c.Row, uint32(row)), append(c.Wire, t.Wire), append(c.Value, t.Value)
	}
	for k := range r.Constraints {
		for _, t := range r.Constraints[k].A {
			add(&co[0], k, t)
		}
		for _, t := range r.Constraints[k].B {
			add(&co[1], k, t)
		}
	}
	one := proofdata.One(r.Curve)
	for i := 0; i <= r.NPublic(); i++ {
		add(&co[0], len(r.Constraints)+i, Term{Wire: uint32(i), Value: one})
	}
	return co
}

// zkeyBody is a zkey's points as the file holds them: a point's file
// layout is its gnark-crypto affine point's memory (decode), so each is a
// view of the points, not a copy.
type zkeyBody struct {
	head                [6][]byte // [α]₁ [β]₁ [β]₂ [γ]₂ [δ]₁ [δ]₂, the header's order
	ic, a, b1, b2, c, h []byte
	g1, g2              int // a G1 and a G2 point's bytes
}

// onePointBytes is the memory of one point, as the file holds it.
func onePointBytes[P any](p *P) []byte { return pointBytes(unsafe.Slice(p, 1)) }

// WriteZkey writes z to w as snarkjs's zkey_new lays a key out (above),
// with z.Hash as the contributions section's circuit hash and no
// contributions. z must hold every point section (a key New has trimmed,
// or one read with its points left in the file, does not), each of the
// length its header says, and its coefficients in Zkey's order: by row,
// each matrix's terms of a row in order (ZkeyCoefs's, and ParseZkey's of a
// snarkjs key). w is written in one pass, through a buffer.
func WriteZkey(w io.Writer, z *Zkey) error {
	cc := curveOf(z.Curve)
	if cc == nil {
		return fmt.Errorf("zkey: curve %v is not one a zkey can have", z.Curve)
	}
	body, err := cc.body(z)
	if err != nil {
		return fmt.Errorf("zkey: %w", err)
	}
	q, r := cc.q(), cc.r()
	n8q, n8r := (q.BitLen()+63)/64*8, (r.BitLen()+63)/64*8
	nA, nB := len(z.Coefs[0].Row), len(z.Coefs[1].Row)
	for m, c := range z.Coefs {
		if len(c.Wire) != len(c.Row) || len(c.Value) != len(c.Row) {
			return fmt.Errorf("zkey: matrix %d: %d rows, %d wires and %d values", m, len(c.Row), len(c.Wire), len(c.Value))
		}
		for k := range c.Row {
			if int(c.Row[k]) >= z.DomainSize || int(c.Wire[k]) >= z.NVars || k > 0 && c.Row[k] < c.Row[k-1] {
				return fmt.Errorf("zkey: matrix %d: coefficient %d at row %d, wire %d: outside the domain of %d or the %d wires, or out of row order", m, k, c.Row[k], c.Wire[k], z.DomainSize, z.NVars)
			}
		}
	}
	if uint64(nA+nB) > 1<<32-1 {
		return fmt.Errorf("zkey: %d coefficients, more than the section's count can say", nA+nB)
	}

	bw := bufio.NewWriterSize(w, 1<<20)
	var word [8]byte
	u32 := func(v uint32) {
		binary.LittleEndian.PutUint32(word[:], v)
		bw.Write(word[:4])
	}
	section := func(typ uint32, size int) {
		u32(typ)
		binary.LittleEndian.PutUint64(word[:], uint64(size))
		bw.Write(word[:])
	}
	le := func(v []uint64, n8 int) {
		b := make([]byte, n8)
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], x)
		}
		bw.Write(b)
	}

	bw.WriteString("zkey")
	u32(1)  // version
	u32(10) // sections

	section(1, 4)
	u32(1) // Groth16

	headSize := 0
	for _, p := range body.head {
		headSize += len(p)
	}
	section(2, 4+n8q+4+n8r+12+headSize)
	u32(uint32(n8q))
	le(limbsOf(q, n8q/8), n8q)
	u32(uint32(n8r))
	le(limbsOf(r, n8r/8), n8r)
	u32(uint32(z.NVars))
	u32(uint32(z.NPublic))
	u32(uint32(z.DomainSize))
	for _, p := range body.head {
		bw.Write(p)
	}

	// coefficients: by row, a row's A terms before its B terms
	section(4, 4+(nA+nB)*(12+n8r))
	u32(uint32(nA + nB))
	entry := make([]byte, 12+n8r)
	put := func(m int, k int) {
		c := &z.Coefs[m]
		binary.LittleEndian.PutUint32(entry[0:], uint32(m))
		binary.LittleEndian.PutUint32(entry[4:], c.Row[k])
		binary.LittleEndian.PutUint32(entry[8:], c.Wire[k])
		cc.putCoef(entry[12:], c.Value[k])
		bw.Write(entry)
	}
	for i, j := 0, 0; i < nA || j < nB; {
		row := z.Coefs[0].Row
		if i < nA && (j >= nB || row[i] <= z.Coefs[1].Row[j]) {
			for r0 := row[i]; i < nA && row[i] == r0; i++ {
				put(0, i)
			}
			continue
		}
		for r0 := z.Coefs[1].Row[j]; j < nB && z.Coefs[1].Row[j] == r0; j++ {
			put(1, j)
		}
	}

	for _, s := range []struct {
		typ uint32
		b   []byte
	}{{3, body.ic}, {9, body.h}, {8, body.c}, {5, body.a}, {6, body.b1}, {7, body.b2}} {
		section(s.typ, len(s.b))
		bw.Write(s.b)
	}

	section(10, blake2b.Size+4)
	bw.Write(z.Hash[:])
	u32(0) // contributions
	return bw.Flush()
}

// ZkeyHash is the circuit hash zkey_new records for z (csHash, its
// contributions section's first 64 bytes): blake2b-512 over the points in
// snarkjs's uncompressed form (big-endian coordinates x then y, a G2
// coordinate's c1 before its c0, infinity all zeros), in this order: [α]₁
// [β]₁ [β]₂ [γ]₂ [δ]₁ [δ]₂ of the header; then the IC, H, C, A, B1 and B2
// sections, each after its point count (u32, big-endian). For H, snarkjs
// hashes not the section's points but the ceremony's [τⁱ·(τⁿ − 1)]₁
// (zkey_new's hashHPoints: domainSize − 1 as the count, then the points
// its chunks read; Ptau's HashH): hashH, G1 points of z's curve ([]G1Affine).
// With hashH nil, the H section's own points are hashed after their count:
// a test key's hash, which no ceremony can check (there is none).
func ZkeyHash(z *Zkey, hashH any) ([blake2b.Size]byte, error) {
	cc := curveOf(z.Curve)
	if cc == nil {
		return [blake2b.Size]byte{}, fmt.Errorf("zkey: curve %v is not one a zkey can have", z.Curve)
	}
	body, err := cc.body(z)
	if err != nil {
		return [blake2b.Size]byte{}, fmt.Errorf("zkey: %w", err)
	}
	h, _ := blake2b.New512(nil)
	buf := make([]byte, 0, 1<<16)
	hashPoints := func(b []byte, size int, g2 bool) {
		// a chunk at a time: the uncompressed copy of a large section is
		// never whole
		for len(b) > 0 {
			k := min(len(b), cap(buf)/size*size)
			buf = buf[:k]
			cc.toU(buf, b[:k], g2)
			h.Write(buf)
			b = b[k:]
		}
	}
	count := func(n int) {
		var c [4]byte
		binary.BigEndian.PutUint32(c[:], uint32(n))
		h.Write(c[:])
	}
	for i, p := range body.head {
		hashPoints(p, len(p), i == 2 || i == 3 || i == 5)
	}
	section := func(b []byte, g2 bool) {
		size := body.g1
		if g2 {
			size = body.g2
		}
		count(len(b) / size)
		hashPoints(b, size, g2)
	}
	section(body.ic, false)
	if hashH == nil {
		section(body.h, false)
	} else {
		b, err := cc.g1Bytes(hashH)
		if err != nil {
			return [blake2b.Size]byte{}, fmt.Errorf("zkey: the hashed H points: %w", err)
		}
		count(z.DomainSize - 1)
		hashPoints(b, body.g1, false)
	}
	section(body.c, false)
	section(body.a, false)
	section(body.b1, false)
	section(body.b2, true)
	var sum [blake2b.Size]byte
	h.Sum(sum[:0])
	return sum, nil
}
