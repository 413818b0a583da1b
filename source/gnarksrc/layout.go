package gnarksrc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"math/bits"

	"github.com/consensys/gnark/constraint"
	"github.com/fxamacker/cbor/v2"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// ─── a gnark file's layout, checked before it is decoded ─────────────────────
//
// gnark's decoders allocate by the counts a file declares. Before one runs,
// the file's layout is walked (reading only its length fields, a point's
// first byte, and the few bytes that size the rest) and every part's
// declared size is checked, with boundedread.Need, against what the file
// has left and against what the headers read so far, or the circuit's
// r1cs, say it holds: a part grown in its middle (a sparse file of
// gigabytes) is refused unread, naming it. The walk records each part it
// passes (layoutPart), in file order.

// layout walks a gnark binary encoding in a file of size bytes through r.
// Points are fp (G1) or 2·fp (G2) bytes compressed and twice that raw, as
// the metadata bits of their first byte say, read as the curve's
// gnark-crypto reads them (its isCompressed: BLS12-381's raw point at
// infinity has bits of its own); gnark-crypto's encoders write one
// encoding a file. fp is the curve's base-field size (32 for BN254, 48
// for BLS12-381).
type layout struct {
	r          io.ReaderAt
	size, pos  int64
	fp         int64
	compressed func(msb byte) bool
	err        error
	parts      []layoutPart
}

// layoutPart is one part of a gnark file, as its walk passed it: size
// bytes from off; for a counted part, its count's field (a big-endian u32
// for a slice of points, a little-endian u64 length for an r1cs section)
// and the bytes an item of it takes.
type layoutPart struct {
	name      string
	off, size int64
	countAt   int64 // −1: a part of fixed size
	width     int   // its count's bytes: 4 or 8
	countLE   bool  // little-endian (gnark's r1cs; its keys are big-endian)
	unit      int64
	within    []int64 // little-endian u64 lengths of what holds it (the r1cs's body)
}

// newLayout is a walk of r (size bytes) in curve id's encoding.
func newLayout(r io.ReaderAt, size int64, id curve.ID) *layout {
	return &layout{r: r, size: size, fp: int64(id.Params().FpBytes), compressed: gnarkCurves[id].compressed}
}

func (l *layout) fail(format string, a ...any) {
	if l.err == nil {
		l.err = fmt.Errorf(format, a...)
	}
}

// skip passes n bytes of what, which the file must still hold.
func (l *layout) skip(n int64, what string) {
	if l.err == nil && (n < 0 || n > l.size-l.pos) {
		l.fail("%s needs %d bytes at byte %d, the file has %d: truncated, or not as gnark writes it", what, n, l.pos, l.size-l.pos)
	}
	if l.err == nil {
		l.pos += n
	}
}

func (l *layout) read(n int, what string) []byte {
	b := make([]byte, n)
	at := l.pos
	if l.skip(int64(n), what); l.err == nil {
		if _, err := l.r.ReadAt(b, at); err != nil {
			l.fail("%s: %v", what, err)
		}
	}
	return b
}

func (l *layout) u32(what string) uint32 { return binary.BigEndian.Uint32(l.read(4, what)) }
func (l *layout) u64(what string) uint64 { return binary.BigEndian.Uint64(l.read(8, what)) }

// fixed passes a part of n bytes that nothing declares.
func (l *layout) fixed(n int64, what string) {
	at := l.pos
	if l.skip(n, what); l.err == nil {
		l.parts = append(l.parts, layoutPart{name: what, off: at, size: n, countAt: -1})
	}
}

// pointSize is the size of the point starting at the walk's position.
func (l *layout) pointSize(g2 bool, what string) int64 {
	size := l.fp
	if g2 {
		size *= 2
	}
	b := l.read(1, what)
	l.pos--                  // a peek
	if !l.compressed(b[0]) { // raw: both coordinates
		size *= 2
	}
	return size
}

func (l *layout) point(g2 bool, what string) {
	if l.err == nil {
		l.fixed(l.pointSize(g2, what), what)
	}
}

// slice is a walked slice of points: its count and its points' size.
type slice struct {
	part       int // its index in parts; −1 when the walk failed
	n          uint32
	size, unit int64
}

// points passes a slice of points: a u32 count, then the points, each the
// size of the first, which the file must hold (each part's need is
// checked once the walk has read what sizes it: checkSlice).
func (l *layout) points(g2 bool, what string) slice {
	countAt := l.pos
	n := l.u32(what)
	if l.err != nil {
		return slice{part: -1}
	}
	unit := int64(0)
	if n > 0 {
		unit = l.pointSize(g2, what)
	}
	at := l.pos
	if l.skip(boundedread.Items(uint64(n), uint64(unit), 0), what); l.err != nil {
		return slice{part: -1}
	}
	if unit == 0 {
		unit = l.fp // an empty slice: its points would be at least this
	}
	l.parts = append(l.parts, layoutPart{name: what, off: at, size: int64(n) * unit, countAt: countAt, width: 4, unit: unit})
	return slice{part: len(l.parts) - 1, n: n, size: int64(n) * unit, unit: unit}
}

// scan reads a walked slice's points, 64 KiB at a time, and refuses one
// not of the first's encoding (its metadata bits), or, raw, all zero bytes
// (gnark-crypto marks a raw infinity in its metadata): what a count grown
// over zeros, or a slice shifted by bytes inserted, holds.
func (l *layout) scan(s slice, what string) {
	if l.err != nil || s.part < 0 || s.n == 0 {
		return
	}
	p := l.parts[s.part]
	per := max(1, (64<<10)/s.unit)
	buf := make([]byte, per*s.unit)
	var comp bool
	for i := int64(0); i < int64(s.n); i += per {
		k := min(per, int64(s.n)-i)
		b := buf[:k*s.unit]
		if _, err := l.r.ReadAt(b, p.off+i*s.unit); err != nil {
			l.fail("%s: %v", what, err)
			return
		}
		for j := int64(0); j < k; j++ {
			pt := b[j*s.unit : (j+1)*s.unit]
			c := l.compressed(pt[0])
			if i+j == 0 {
				comp = c
			}
			if c != comp || !c && zeroed(pt[0], pt[1:]) {
				l.fail("%s: point %d of %d is no point of the slice's encoding: not a key as gnark writes it", what, i+j, s.n)
				return
			}
		}
	}
}

// checkSlice checks a walked slice's size against want points.
func (l *layout) checkSlice(s slice, what string, want uint64) {
	if l.err != nil || s.part < 0 {
		return
	}
	need := boundedread.Exactly(boundedread.Items(want, uint64(s.unit), 0), fmt.Sprintf("%d points", want))
	if err := need.Check(what, s.size, -1); err != nil {
		l.err = err
	}
}

// checkAtMost checks a walked slice holds at most max points.
func (l *layout) checkAtMost(s slice, what string, max uint64) {
	if l.err != nil || s.part < 0 {
		return
	}
	need := boundedread.Between(0, boundedread.Items(max, uint64(s.unit), 0), fmt.Sprintf("at most %d points", max))
	if err := need.Check(what, s.size, -1); err != nil {
		l.err = err
	}
}

// end checks the walk reached the end of the file.
func (l *layout) end(what string) error {
	if l.err == nil && l.pos != l.size {
		l.fail("%d trailing bytes after the %s (it ends at byte %d of %d)", l.size-l.pos, what, l.pos, l.size)
	}
	return l.err
}

// keyShape is what a circuit's r1cs says its keys hold, for their
// layouts' checks: gnark's groth16 Setup's counts (checkKeys says why
// each).
type keyShape struct {
	wires, domain uint64
	k             uint64   // the proving key's private (K) points
	commits       []uint64 // each commitment key's basis: its private committed wires
	vkK           uint64   // the verifying key's K: public wires and commitments
	vkCommitted   []uint64 // each commitment's committed public wires
}

// shapeOf is ccs's keys' shape.
func shapeOf(ccs constraint.ConstraintSystem) (*keyShape, error) {
	commits, ok := ccs.GetCommitments().(constraint.Groth16Commitments)
	if !ok {
		return nil, fmt.Errorf("%s: commitments of a %T, not Groth16's", R1CSFile, ccs.GetCommitments())
	}
	nbPublic, nbSecret, nbInternal := ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables(), ccs.GetNbInternalVariables()
	s := &keyShape{wires: uint64(nbPublic + nbSecret + nbInternal),
		domain: uint64(1) << bits.Len64(uint64(max(ccs.GetNbConstraints(), 1)-1)),
		vkK:    uint64(nbPublic + len(commits))}
	private := nbSecret + nbInternal - len(commits)
	for _, ws := range commits.GetPrivateCommitted() {
		s.commits = append(s.commits, uint64(len(ws)))
		private -= len(ws)
	}
	s.k = uint64(max(private, 0))
	for _, ws := range commits.GetPublicAndCommitmentCommitted(commits.CommitmentIndexes(), nbPublic) {
		s.vkCommitted = append(s.vkCommitted, uint64(len(ws)))
	}
	return s, nil
}

// checkPKLayout checks a circuit.pk (groth16/<curve> ProvingKey.writeTo,
// of curve id) before gnark's decoder allocates by its counts: the domain
// a power of two of at most 2^circuits.MaxLogDomain (its twiddles are
// precomputed at read), every slice within the file and the size the key's
// own counts give it (Z: the domain less one; A and B: the wires less
// those at infinity; B₂: B's; K and each commitment key: at most the
// wires), nothing after the key; with shape (its r1cs's; nil: none),
// every count the circuit's. Raw and compressed keys alike.
func checkPKLayout(id curve.ID, shape *keyShape) func(r io.ReaderAt, size int64) error {
	return func(r io.ReaderAt, size int64) error { return pkLayout(r, size, id, shape).err }
}

func pkLayout(r io.ReaderAt, size int64, id curve.ID, shape *keyShape) *layout {
	l := newLayout(r, size, id)
	domain := binary.BigEndian.Uint64(l.read(8, "proving key's domain"))
	switch {
	case l.err != nil:
		return l
	case domain == 0 || domain&(domain-1) != 0 || domain > 1<<circuits.MaxLogDomain:
		l.fail("proving key's domain of %d is not a power of two up to 2^%d: not a gnark proving key zkpipe can use", domain, circuits.MaxLogDomain)
	case shape != nil && domain != shape.domain:
		l.fail("proving key's domain is %d, %s's constraints need %d: not of one circuit", domain, R1CSFile, shape.domain)
	}
	l.pos = 0
	l.fixed(8+5*proofdata.ScalarBytes+1, "proving key's domain")
	for _, name := range []string{"[α]₁", "[β]₁", "[δ]₁"} {
		l.point(false, "proving key's "+name)
	}
	a, b, z, k := l.points(false, "proving key's A"), l.points(false, "proving key's B"), l.points(false, "proving key's Z"), l.points(false, "proving key's K")
	l.point(true, "proving key's [β]₂")
	l.point(true, "proving key's [δ]₂")
	b2 := l.points(true, "proving key's B₂")
	// the wire count, NbInfinityA and B, then two flags a wire
	const flags = "proving key's infinity flags"
	wiresAt := l.pos
	wires := l.u64("proving key's wire count")
	infA, infB := l.u64("proving key's NbInfinityA"), l.u64("proving key's NbInfinityB")
	switch {
	case l.err != nil:
	case shape != nil && wires != shape.wires:
		l.fail("%s: for %d wires, %s has %d: not of one circuit", flags, wires, R1CSFile, shape.wires)
	case infA > wires || infB > wires:
		l.fail("proving key's NbInfinityA %d or NbInfinityB %d is more than its %d wires: not a gnark proving key", infA, infB, wires)
	}
	at := l.pos
	if l.skip(boundedread.Items(wires, 2, 0), flags); l.err == nil {
		l.parts = append(l.parts, layoutPart{name: flags, off: at, size: 2 * int64(wires), countAt: wiresAt, width: 8, unit: 2})
	}
	n := l.u32("commitments")
	if l.err == nil && shape != nil && uint64(n) != uint64(len(shape.commits)) {
		l.fail("proving key has %d commitment keys, %s has %d commitments: not of one circuit", n, R1CSFile, len(shape.commits))
	}
	for i := uint32(0); i < n && l.err == nil; i++ {
		basis, sigma := fmt.Sprintf("commitment key %d's basis", i), fmt.Sprintf("commitment key %d's σ·basis", i)
		bs, ss := l.points(false, basis), l.points(false, sigma)
		want := uint64(bs.n)
		if shape != nil {
			want = shape.commits[i]
		}
		l.checkAtMost(bs, basis, wires)
		l.checkSlice(bs, basis, want)
		l.checkSlice(ss, sigma, want)
	}
	if l.err != nil {
		return l
	}
	l.end("proving key")
	// each slice as the key's own counts, and the circuit's, size it
	l.checkSlice(z, "proving key's Z", domain-1)
	l.checkSlice(a, "proving key's A", wires-infA)
	l.checkSlice(b, "proving key's B", wires-infB)
	l.checkSlice(b2, "proving key's B₂", uint64(b.n))
	if shape != nil {
		l.checkSlice(k, "proving key's K", shape.k)
	} else {
		l.checkAtMost(k, "proving key's K", wires)
	}
	return l
}

// checkVKLayout checks a circuit.vk (groth16/<curve> VerifyingKey.writeTo,
// of curve id) before gnark's decoder allocates by its counts: every
// slice within the file, one list of committed public wires a commitment
// key, each no longer than K, nothing after the key; with shape (its
// r1cs's; nil: none, a verifying key alone, bounded by vkLimit), K and the
// lists the circuit's.
func checkVKLayout(id curve.ID, shape *keyShape) func(r io.ReaderAt, size int64) error {
	return func(r io.ReaderAt, size int64) error { return vkLayout(r, size, id, shape).err }
}

func vkLayout(r io.ReaderAt, size int64, id curve.ID, shape *keyShape) *layout {
	l := newLayout(r, size, id)
	for _, p := range []struct {
		g2   bool
		name string
	}{{false, "[α]₁"}, {false, "[β]₁"}, {true, "[β]₂"}, {true, "[γ]₂"}, {false, "[δ]₁"}, {true, "[δ]₂"}} {
		l.point(p.g2, p.name)
	}
	k := l.points(false, "verifying key's K")
	if shape != nil {
		l.checkSlice(k, "verifying key's K", shape.vkK)
	} else {
		// a verifying key alone: nothing says how many public inputs it
		// has, so K's points are looked at before gnark allocates by
		// their count (a few KiB a read, K within vkLimit)
		l.scan(k, "verifying key's K")
	}
	lists := l.u32("committed public wires")
	if l.err == nil && shape != nil && uint64(lists) != uint64(len(shape.vkCommitted)) {
		l.fail("verifying key has %d lists of committed public wires, %s has %d commitments: not of one circuit", lists, R1CSFile, len(shape.vkCommitted))
	}
	for i := uint32(0); i < lists && l.err == nil; i++ {
		what := fmt.Sprintf("verifying key's committed public wires %d", i)
		countAt := l.pos
		m := l.u32(what)
		want := boundedread.Between(0, boundedread.Items(uint64(k.n), 8, 0), fmt.Sprintf("at most %d wires (K's)", k.n))
		if shape != nil {
			want = boundedread.Exactly(boundedread.Items(shape.vkCommitted[i], 8, 0), fmt.Sprintf("%d wires", shape.vkCommitted[i]))
		}
		if l.err == nil {
			if err := want.Check(what, boundedread.Items(uint64(m), 8, 0), -1); err != nil {
				l.err = err
			}
		}
		at := l.pos
		l.skip(8*int64(m), what)
		if l.err == nil {
			l.parts = append(l.parts, layoutPart{name: what, off: at, size: 8 * int64(m), countAt: countAt, width: 4, unit: 8})
		}
	}
	n := l.u32("commitments")
	if l.err == nil && n != lists {
		l.fail("verifying key has %d commitment keys and %d lists of committed public wires: not a gnark verifying key", n, lists)
	}
	for i := uint32(0); i < n && l.err == nil; i++ {
		l.point(true, fmt.Sprintf("commitment key %d's G", i))
		l.point(true, fmt.Sprintf("commitment key %d's −σG", i))
	}
	l.end("verifying key")
	return l
}

// checkProofLayout checks a gnark proof (groth16/<curve> Proof.writeTo:
// [A]₁, [B]₂, [C]₁, the commitments, their proof of knowledge; of curve
// id) held in memory before gnark's decoder allocates by its commitment
// count, which must be commitments (its verifying key's; −1: any), and
// that nothing follows it.
func checkProofLayout(data []byte, id curve.ID, commitments int) error {
	return proofLayout(data, id, commitments).err
}

func proofLayout(data []byte, id curve.ID, commitments int) *layout {
	l := newLayout(bytes.NewReader(data), int64(len(data)), id)
	l.point(false, "[A]₁")
	l.point(true, "[B]₂")
	l.point(false, "[C]₁")
	c := l.points(false, "proof's commitments")
	if commitments >= 0 {
		l.checkSlice(c, "proof's commitments", uint64(commitments))
	}
	l.point(false, "commitments' proof of knowledge")
	l.end("proof")
	return l
}

// ─── the constraint system ───────────────────────────────────────────────────

// r1csLayout walks a gnark circuit.r1cs (constraint/<curve> system.WriteTo,
// gnark v0.16.3) of size bytes in r before gnark reads its body (whole,
// into memory) and returns its curve: a little-endian u64 body length and
// three u64 version fields, then the body, which must end the file. The
// body opens with four u64 section lengths, and each section must be
// exactly what its own counts make it:
//
//	levels        u64 L, then L compressed u32 lists (u64 n, n u32 words)
//	instructions  three compressed u32 lists and a compressed u64 list
//	calldata      u64 count, then count varints of u32s (1 to 5 bytes each)
//	CBOR          one CBOR item (constraint.System), its scalar field the
//	              circuit's curve
//	coefficients  what follows: u64 count, then count 32-byte elements
//
// gnark's decoder reads each section's items and takes whatever follows
// them; here a section with a byte more or less than its items is refused.
// The walk reads the length fields through a small window (a gap is
// passed by seeking); the calldata's varints and the CBOR are read
// through, within their sections' sizes.
func r1csLayout(r io.ReaderAt, size int64) (*layout, curve.ID, error) {
	l := &layout{r: r, size: size}
	w := &window{r: r}
	var head [64]byte
	if k, _ := r.ReadAt(head[:], 0); k < len(head) {
		return l, 0, fmt.Errorf("truncated: %d bytes, not even gnark's r1cs header", k)
	}
	body := binary.LittleEndian.Uint64(head[:8])
	if body > uint64(size) || 32+body != uint64(size) {
		if body < uint64(size) {
			return l, 0, fmt.Errorf("%d trailing bytes after the constraint system (its header says %d bytes, the file has %d)", uint64(size)-32-body, 32+body, size)
		}
		return l, 0, fmt.Errorf("its header says %d bytes, the file has %d: truncated, or not a gnark r1cs", 32+body, size)
	}
	names := [4]string{"levels", "instructions", "calldata", "CBOR"}
	var lens [4]int64
	off := int64(64)
	for i := range 4 {
		n := binary.LittleEndian.Uint64(head[32+8*i:])
		if n > uint64(size-off) {
			return l, 0, fmt.Errorf("its %s section says %d bytes, the file has %d for it: truncated, or not a gnark r1cs", names[i], n, size-off)
		}
		lens[i] = int64(n)
		l.parts = append(l.parts, layoutPart{name: "its " + names[i] + " section", off: off, size: int64(n), countAt: int64(32 + 8*i), width: 8, countLE: true, unit: 1, within: []int64{0}})
		off += int64(n)
	}
	sec := func(i int) (int64, int64) { return l.parts[i].off, l.parts[i].off + lens[i] }

	// levels: L lists, each of one instruction or more, together the
	// instructions (what intcomp decompresses them to: their blocks'
	// lengths, summed)
	start, end := sec(0)
	w.at(start)
	levels := w.u64()
	if err := boundedread.Between(boundedread.Items(levels, 8, 8), lens[0], fmt.Sprintf("%d levels", levels)).Check("its levels section", lens[0], -1); err != nil {
		return l, 0, err
	}
	var leveled uint64
	for i := uint64(0); i < levels && w.err == nil; i++ {
		n := w.clist(4, end)
		if w.err == nil && n == 0 {
			w.err = fmt.Errorf("level %d has no instruction", i)
		}
		leveled += n
	}
	if err := w.ends(end, "its levels section", fmt.Sprintf("its %d levels", levels)); err != nil {
		return l, 0, err
	}
	// instructions: three u32 lists and a u64 list, one value each an
	// instruction
	start, end = sec(1)
	w.at(start)
	var lists [4]uint64
	for i, unit := range []int64{4, 4, 4, 8} {
		lists[i] = w.clist(unit, end)
	}
	if err := w.ends(end, "its instructions section", "its four lists"); err != nil {
		return l, 0, err
	}
	if lists[1] != lists[0] || lists[2] != lists[0] || lists[3] != lists[0] || leveled != lists[0] {
		return l, 0, fmt.Errorf("its instructions section: lists of %v instructions, its levels %d: not a gnark r1cs", lists, leveled)
	}
	// calldata: varints of u32s, 1 to 5 bytes each, at least one an
	// instruction (its blueprint's size or fields)
	start, end = sec(2)
	w.at(start)
	count := w.u64()
	if err := boundedread.Between(boundedread.Items(count, 1, 8), boundedread.Items(count, 5, 8), fmt.Sprintf("%d varints", count)).Check("its calldata section", lens[2], -1); err != nil {
		return l, 0, err
	}
	if w.err == nil && lists[0] > count {
		return l, 0, fmt.Errorf("its calldata section: %d words for %d instructions: not a gnark r1cs", count, lists[0])
	}
	if w.err == nil {
		w.err = walkVarints(r, w.pos, end, count)
	}
	if w.err != nil {
		return l, 0, fmt.Errorf("its calldata section: %w", w.err)
	}
	// CBOR: one item, decoded as it is read (its buffer the item's size)
	start, end = sec(3)
	id, n, err := r1csCurve(io.NewSectionReader(r, start, lens[3]))
	if err != nil {
		return l, 0, err
	}
	if n != lens[3] {
		return l, 0, fmt.Errorf("its CBOR section: its item takes %d bytes, the section has %d", n, lens[3])
	}
	// coefficients: the rest
	w.at(end)
	ct := w.u64()
	rest := size - end
	l.parts = append(l.parts, layoutPart{name: "its coefficients", off: end + 8, size: rest - 8, countAt: end, width: 8, countLE: true, unit: 32, within: []int64{0}})
	if w.err != nil {
		return l, 0, fmt.Errorf("its coefficients: %w", w.err)
	}
	if err := boundedread.Exactly(boundedread.Items(ct, 32, 8), fmt.Sprintf("%d coefficients", ct)).Check("its coefficients", rest, -1); err != nil {
		return l, 0, err
	}
	return l, id, nil
}

// checkR1CSLayout is r1csLayout's check.
func checkR1CSLayout(r io.ReaderAt, size int64) (curve.ID, error) {
	_, id, err := r1csLayout(r, size)
	return id, err
}

// window reads little-endian length fields at increasing offsets of r
// through a 64 KiB buffer, passing gaps beyond it by seeking.
type window struct {
	r       io.ReaderAt
	buf     []byte
	bufAt   int64
	pos     int64
	err     error
	lastEnd int64
}

func (w *window) at(off int64) { w.pos = off }

func (w *window) bytes(n int64) []byte {
	if w.err != nil {
		return make([]byte, n)
	}
	if w.pos < w.bufAt || w.pos+n > w.bufAt+int64(len(w.buf)) {
		if w.buf == nil {
			w.buf = make([]byte, 64<<10)
		}
		w.buf = w.buf[:cap(w.buf)]
		k, err := w.r.ReadAt(w.buf, w.pos)
		w.buf, w.bufAt = w.buf[:k], w.pos
		if int64(k) < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			w.err = err
			return make([]byte, n)
		}
	}
	b := w.buf[w.pos-w.bufAt : w.pos-w.bufAt+n]
	w.pos += n
	return b
}

func (w *window) u64() uint64 { return binary.LittleEndian.Uint64(w.bytes(8)) }

// clist passes a compressed list (gnark's ioutils over ronanh/intcomp,
// words of unit bytes: 4 or 8), which must end by end, and returns how
// many values it decompresses to: a u64 count of words, then blocks, each
// opening with its values' count and its own length in words (a u32 each;
// a u64's halves), then the last block's length. intcomp allocates by the
// counts, and loops forever on a block of no length: each is walked here,
// only its header read.
func (w *window) clist(unit, end int64) uint64 {
	at := w.pos
	n := w.u64()
	if w.err == nil && (w.pos > end || n > uint64(end-w.pos)/uint64(unit)) {
		w.err = fmt.Errorf("a list of %d words of %d bytes at byte %d overruns its section", n, unit, at)
	}
	if w.err != nil || n == 0 {
		return 0
	}
	start, words := w.pos, int64(n)-1 // the last word: the last block's length
	var values uint64
	for i := int64(0); i < words && w.err == nil; {
		w.at(start + i*unit)
		var count, length uint64
		if unit == 4 {
			h := w.bytes(8)
			count, length = uint64(binary.LittleEndian.Uint32(h)), uint64(binary.LittleEndian.Uint32(h[4:]))
		} else {
			h := w.u64()
			count, length = h&0xffffffff, h>>32
			if count >= 1<<31 {
				w.err = fmt.Errorf("a compressed list at byte %d: a block of %d values", at, int32(count))
			}
		}
		if w.err == nil && (length < uint64(8/unit) || length > uint64(words-i)) {
			w.err = fmt.Errorf("a compressed list at byte %d: a block of %d words, the list has %d left", at, length, words-i)
		}
		values += count
		i += int64(length)
	}
	w.pos = start + int64(n)*unit
	return values
}

// ends checks the walk of a section (what) ended exactly at its end.
func (w *window) ends(end int64, what, items string) error {
	if w.err != nil {
		return fmt.Errorf("%s: %w", what, w.err)
	}
	if w.pos != end {
		return fmt.Errorf("%s: %s end at byte %d, the section at %d: %d bytes it does not account for", what, items, w.pos, end, end-w.pos)
	}
	return nil
}

// r1csCurve decodes the CBOR item at the start of r (constraint.System)
// as it reads it and returns the curve whose scalar field it records
// (gnark's decoder does not compare it with the curve it decodes as), and
// the item's size.
func r1csCurve(r io.Reader) (curve.ID, int64, error) {
	dm, err := cbor.DecOptions{MaxArrayElements: 1<<31 - 1, MaxMapPairs: 1<<31 - 1}.DecMode()
	if err != nil {
		return 0, 0, err
	}
	var sys struct{ ScalarField string }
	dec := dm.NewDecoder(r)
	if err := dec.Decode(&sys); err != nil {
		return 0, 0, fmt.Errorf("its body is not gnark's CBOR (%v): not a gnark r1cs", err)
	}
	q, ok := new(big.Int).SetString(sys.ScalarField, 16)
	if !ok {
		return 0, 0, fmt.Errorf("its scalar field %q is not a number: not a gnark r1cs", sys.ScalarField)
	}
	for _, id := range curve.All {
		if q.Cmp(id.ECC().ScalarField()) == 0 {
			return id, int64(dec.NumBytesRead()), nil
		}
	}
	return 0, 0, fmt.Errorf("a circuit over the field of modulus 0x%s: zkpipe proves on %s only", q.Text(16), curve.Names("and"))
}
