package gnarksrc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark/constraint"
	"github.com/fxamacker/cbor/v2"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/boundedread"
)

// checkKeys refuses a circuit whose constraint system, proving key and
// verifying key are not of one circuit and one setup: a proof made with
// such keys is rejected by every verifier, and each job would fail (or,
// before this check and the one in Emit, be reported proved).
//
// What can be checked without the setup's secrets, following gnark's
// groth16 Setup (backend/groth16/bn254/setup.go, v0.16.3):
//
//	r1cs ↔ pk  wires = len(InfinityA) = len(InfinityB); domain = the power of
//	           two ≥ constraints; len(Z) = domain − 1; len(K) = private wires
//	           less committed and commitment wires; InfinityA[i] (B) exactly
//	           when wire i is absent from the A (B) matrix; one commitment
//	           key per commitment, of the committed wires' count
//	r1cs ↔ vk  len(K) = public wires + commitments; one commitment key per
//	           commitment; the public committed wires are the r1cs's
//	pk ↔ vk    [α]₁, [β]₁, [δ]₁, [β]₂, [δ]₂ equal; each commitment key pair
//	           satisfies e(basis₀, −[σ]₂)·e(σ·basis₀, G₂) = 1
//
// The errors name the file at fault, or both when either may be. The
// checks over the keys' points are the curve's (gnarkCurve.checkKeys, one
// template for every curve); the r1cs's own are here.
func checkKeys(g gnarkCurve, commits constraint.Groth16Commitments) error {
	return g.checkKeys(commits)
}

// checkWires checks the proving key's wire count (the lengths of its
// InfinityA and B), domain and H query against the r1cs.
func checkWires(ccs constraint.ConstraintSystem, infA, infB int, domainSize uint64, z int) error {
	nbWires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
	nbConstraints := ccs.GetNbConstraints()
	if infA != nbWires || infB != nbWires {
		return fmt.Errorf("%s: proving key is for %d wires, %s has %d: not of one circuit", PKFile, infA, R1CSFile, nbWires)
	}
	domain := uint64(1) << bits.Len64(uint64(max(nbConstraints, 1)-1))
	if domainSize != domain {
		return fmt.Errorf("%s: proving key's domain is %d, %s's %d constraints need %d: not of one circuit", PKFile, domainSize, R1CSFile, nbConstraints, domain)
	}
	if uint64(z) != domain-1 {
		return fmt.Errorf("%s: %d H points for a domain of %d (want %d)", PKFile, z, domain, domain-1)
	}
	return nil
}

// checkInfinity checks that InfinityA[i] (B) is set exactly when wire i is
// absent from the r1cs's A (B) matrix. The R1C instructions are decoded
// over all cores (a 2^27 circuit's were some 4 s on one), each marking
// the wires it uses in two bitsets.
func checkInfinity(sys *constraint.System, nbWires int, infinityA, infinityB []bool) error {
	isR1C := make([]bool, len(sys.Blueprints))
	for i, b := range sys.Blueprints {
		_, isR1C[i] = b.(constraint.BlueprintR1C)
	}
	inA, inB := make([]uint64, (nbWires+63)/64), make([]uint64, (nbWires+63)/64)
	mark := func(set []uint64, le constraint.LinearExpression) {
		for _, t := range le {
			if w := t.WireID(); t.CoeffID() != constraint.CoeffIdZero && w < nbWires {
				if bit := uint64(1) << (w % 64); atomic.LoadUint64(&set[w/64])&bit == 0 {
					atomic.OrUint64(&set[w/64], bit)
				}
			}
		}
	}
	forRanges(len(sys.Instructions), 1<<14, func(lo, hi int) {
		var c constraint.R1C
		for _, inst := range sys.Instructions[lo:hi] {
			if int(inst.BlueprintID) >= len(isR1C) || !isR1C[inst.BlueprintID] {
				continue
			}
			sys.Blueprints[inst.BlueprintID].(constraint.BlueprintR1C).DecompressR1C(&c, inst.Unpack(sys))
			mark(inA, c.L)
			mark(inB, c.R)
		}
	})
	var bad atomic.Int64
	bad.Store(int64(nbWires))
	forRanges(nbWires, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if infinityA[i] == (inA[i/64]>>(i%64)&1 == 1) || infinityB[i] == (inB[i/64]>>(i%64)&1 == 1) {
				for {
					b := bad.Load()
					if int64(i) >= b || bad.CompareAndSwap(b, int64(i)) {
						return
					}
				}
			}
		}
	})
	if i := bad.Load(); i < int64(nbWires) {
		return fmt.Errorf("%s and %s disagree on which wires the A and B matrices use (wire %d): not of one circuit", R1CSFile, PKFile, i)
	}
	return nil
}

// ─── reading a circuit's files ───────────────────────────────────────────────

// readFile decodes the circuit file at path with read, under boundedread: a
// FIFO nobody writes to fails after the load timeout, /dev/zero and its
// like are refused, and a file over limit (what such a file can be) is
// refused by its size before a byte is read. A regular file's layout is
// checked first by check (nil: none), which reads only its length fields,
// so that no count gnark's decoder would allocate by can exceed the file
// (a pipe is read whole first, within limit, and walked in memory); and
// after decoding, the file must end where the decoder stopped.
func readFile(path, what string, limit int64, o Options, check func(r io.ReaderAt, size int64) error, read func(r io.Reader) (int64, error)) error {
	return readFileAt(path, what, limit, o, check, nil, read)
}

// readFileAt is readFile with readAt, which decodes a regular file (after
// check) from its offsets in place of read (a pipe's reader still),
// adding the bytes it has read to its counter for the progress lines. It
// must decode every byte of the file or fail: no trailing-bytes check
// follows it.
func readFileAt(path, what string, limit int64, o Options, check func(r io.ReaderAt, size int64) error,
	readAt func(r io.ReaderAt, size int64, read *atomic.Int64) error, read func(r io.Reader) (int64, error)) error {
	// the deadline is of waiting for the file, not of decoding it: a
	// compressed key's square roots take what the machine needs
	bo := o.load()
	bo.IOTime = true
	_, err := boundedread.Read(context.Background(), path, bo, func(f *boundedread.File) (struct{}, error) {
		if f.Size() > limit {
			return struct{}{}, fmt.Errorf("%s: %d bytes, more than a %s can be (%d)", path, f.Size(), what, limit)
		}
		var in io.Reader = f.Capped(limit, what)
		switch {
		case check != nil && f.Size() >= 0:
			if err := check(f, f.Size()); err != nil {
				return struct{}{}, fmt.Errorf("%s: %w", path, err)
			}
		case check != nil:
			// a pipe has no offsets to walk: take it whole (at most limit)
			// and walk it in memory before gnark allocates by its counts
			data, err := io.ReadAll(in)
			if err != nil {
				return struct{}{}, fmt.Errorf("%s: %w", path, err)
			}
			if err := check(bytes.NewReader(data), int64(len(data))); err != nil {
				return struct{}{}, fmt.Errorf("%s: %w", path, err)
			}
			in = bytes.NewReader(data)
		}
		if readAt != nil && f.Size() >= 0 {
			cr := &countingReader{}
			defer reportLoad(o, path, f.Size(), cr)()
			if err := readAt(f, f.Size(), &cr.n); err != nil {
				return struct{}{}, fmt.Errorf("read %s: %w", path, err)
			}
			return struct{}{}, nil
		}
		br := bufio.NewReaderSize(in, 1<<20)
		cr := &countingReader{r: br}
		if sk, ok := in.(interface{ Skip(int64) error }); ok && f.Size() >= 0 {
			// a regular file: a reader may leave parts of it for later
			// (pkdefer.go), past what the buffer holds by seeking
			cr.skip = func(n int64) error {
				k := min(n, int64(br.Buffered()))
				if _, err := br.Discard(int(k)); err != nil {
					return err
				}
				if n -= k; n > 0 {
					if err := sk.Skip(n); err != nil {
						return err
					}
					br.Reset(in)
				}
				return nil
			}
		}
		defer reportLoad(o, path, f.Size(), cr)()
		n, err := read(cr)
		if err != nil {
			return struct{}{}, fmt.Errorf("read %s: %w", path, err)
		}
		if k, err := br.Read(make([]byte, 1)); k > 0 || err != io.EOF {
			return struct{}{}, fmt.Errorf("%s: trailing bytes after the %s (the decoder stopped at byte %d of %s)", path, what, n, sizeOf(f))
		}
		return struct{}{}, nil
	})
	return err
}

// countingReader counts the bytes read through it, for progress lines.
type countingReader struct {
	r    io.Reader
	n    atomic.Int64
	skip func(n int64) error // nil: cannot skip (a pipe)
}

// CanSkip tells whether Skip works: on a regular file.
func (c *countingReader) CanSkip() bool { return c.skip != nil }

// Skip passes n bytes by without reading them (counted as read).
func (c *countingReader) Skip(n int64) error {
	if c.skip == nil {
		return fmt.Errorf("cannot skip: not a regular file")
	}
	if err := c.skip(n); err != nil {
		return err
	}
	c.n.Add(n)
	return nil
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// reportLoad tells o.Progress, every o.ProgressEvery until the returned
// stop is called, how much of the file at path (size bytes, or -1 for a
// pipe) has been read through c, and at stop how long the load took, when
// that was longer than one interval. Reading a compressed key is also its
// decompression, batch by batch, so the bytes read track the work.
func reportLoad(o Options, path string, size int64, c *countingReader) (stop func()) {
	if o.Progress == nil || o.ProgressEvery <= 0 {
		return func() {}
	}
	t0 := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(o.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read := mem.FormatBytes(c.n.Load())
				if size > 0 {
					read = fmt.Sprintf("%s of %s (%d%%)", read, mem.FormatBytes(size), 100*c.n.Load()/size)
				}
				fmt.Fprintf(o.Progress, "zkpipe: loading %s: %s read, %v\n", path, read, time.Since(t0).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		if d := time.Since(t0); d >= o.ProgressEvery {
			fmt.Fprintf(o.Progress, "zkpipe: loaded %s (%s) in %v\n", path, mem.FormatBytes(c.n.Load()), d.Round(time.Millisecond))
		}
	}
}

func sizeOf(f *boundedread.File) string {
	if f.Size() < 0 {
		return "a pipe"
	}
	return fmt.Sprint(f.Size())
}

// layout walks a gnark binary encoding in a file of size bytes through r,
// reading only length fields and one flag byte a slice of points, and
// checks each count against what the file has left and what the circuit
// allows. Points are fp (G1) or 2·fp (G2) bytes compressed and twice that
// raw, as the metadata bits of their first byte say, read as the curve's
// gnark-crypto reads them (its isCompressed: BLS12-381's raw point at
// infinity has bits of its own); gnark-crypto's encoders write one
// encoding a file.
// fp is the curve's base-field size (32 for BN254, 48 for BLS12-381).
type layout struct {
	r          io.ReaderAt
	size, pos  int64
	fp         int64
	compressed func(msb byte) bool
	err        error
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
		l.skip(l.pointSize(g2, what), what)
	}
}

// points passes a slice of points: a u32 count, then the points, each the
// size of the first, which the file must hold.
func (l *layout) points(g2 bool, what string) {
	n := l.u32(what)
	if l.err == nil && n > 0 {
		l.skip(int64(n)*l.pointSize(g2, what), what)
	}
}

// end checks the walk reached the end of the file.
func (l *layout) end(what string) error {
	if l.err == nil && l.pos != l.size {
		l.fail("%d trailing bytes after the %s (it ends at byte %d of %d)", l.size-l.pos, what, l.pos, l.size)
	}
	return l.err
}

// checkR1CSLayout checks a gnark circuit.r1cs (constraint/bn254
// system.WriteTo, gnark v0.16.3) against its size before gnark allocates
// the body: a little-endian u64 body length and three u64 version fields,
// then the body, which must end the file; the body opens with four u64
// section lengths (levels, instructions, calldata, cbor) that must fit it,
// and the calldata section's u64 count (one varint at least each) must fit
// that section.
func checkR1CSLayout(r io.ReaderAt, size int64) error {
	var head [32 + 32]byte
	if k, _ := r.ReadAt(head[:], 0); k < len(head) {
		return fmt.Errorf("truncated: %d bytes, not even gnark's r1cs header", k)
	}
	body := binary.LittleEndian.Uint64(head[:8])
	if body > uint64(size) || 32+body != uint64(size) {
		if body < uint64(size) {
			return fmt.Errorf("%d trailing bytes after the constraint system (its header says %d bytes, the file has %d)", uint64(size)-32-body, 32+body, size)
		}
		return fmt.Errorf("its header says %d bytes, the file has %d: truncated, or not a gnark r1cs", 32+body, size)
	}
	var sum uint64
	for i := range 4 {
		n := binary.LittleEndian.Uint64(head[32+8*i:])
		if n > body || sum+n > body-32 {
			return fmt.Errorf("its sections say more than its %d bytes: not a gnark r1cs", body)
		}
		sum += n
	}
	levels, instructions, calldata := binary.LittleEndian.Uint64(head[32:]), binary.LittleEndian.Uint64(head[40:]), binary.LittleEndian.Uint64(head[48:])
	var count [8]byte
	for _, s := range []struct {
		at, len uint64
		name    string
		each    uint64
	}{{0, levels, "levels", 1}, {levels + instructions, calldata, "calldata", 1}} {
		if s.len < 8 {
			return fmt.Errorf("its %s section of %d bytes has no count: not a gnark r1cs", s.name, s.len)
		}
		if _, err := r.ReadAt(count[:], int64(64+s.at)); err != nil {
			return err
		}
		if n := binary.LittleEndian.Uint64(count[:]); n > (s.len-8)/s.each {
			return fmt.Errorf("its %s section says %d entries in %d bytes: not a gnark r1cs", s.name, n, s.len)
		}
	}
	return nil
}

// checkPKLayout checks a circuit.pk (groth16/<curve> ProvingKey.writeTo, of curve id)
// against its size before gnark's decoder allocates by its counts: the
// domain a power of two of at most 2^circuits.MaxLogDomain (its twiddles
// are precomputed at read), every slice no longer than the file holds (so
// decoding takes at most twice the file: compressed points double), and
// nothing after the key. Raw and compressed keys alike. Whether the counts
// are the r1cs's is checkKeys's to say, once decoded.
func checkPKLayout(id curve.ID) func(r io.ReaderAt, size int64) error {
	return func(r io.ReaderAt, size int64) error { return checkPKLayoutOf(r, size, id) }
}

func checkPKLayoutOf(r io.ReaderAt, size int64, id curve.ID) error {
	l := newLayout(r, size, id)
	if d := l.u64("domain"); l.err == nil && (d == 0 || d&(d-1) != 0 || d > 1<<circuits.MaxLogDomain) {
		return fmt.Errorf("proving key's domain of %d is not a power of two up to 2^%d: not a gnark proving key zkpipe can use", d, circuits.MaxLogDomain)
	}
	l.skip(5*proofdata.ScalarBytes+1, "domain")
	for _, name := range []string{"[α]₁", "[β]₁", "[δ]₁"} {
		l.point(false, name)
	}
	for _, name := range []string{"A", "B", "Z", "K"} {
		l.points(false, name)
	}
	l.point(true, "[β]₂")
	l.point(true, "[δ]₂")
	l.points(true, "B₂")
	// the wire count, then NbInfinityA and B, then a flag a wire for each
	if n := l.u64("wires"); l.err == nil && n > uint64(size) {
		return fmt.Errorf("proving key says %d wires, more than its %d bytes can flag: truncated, or not a gnark proving key", n, size)
	} else {
		l.skip(16+2*int64(n), "infinity flags")
	}
	n := l.u32("commitments")
	for i := uint32(0); i < n && l.err == nil; i++ {
		l.points(false, fmt.Sprintf("commitment key %d", i))
		l.points(false, fmt.Sprintf("commitment key %d", i))
	}
	return l.end("proving key")
}

// checkVKLayout checks a circuit.vk (groth16/<curve> VerifyingKey.writeTo,
// of curve id) against its size before gnark's decoder
// allocates by its counts: every slice no longer than the file holds,
// nothing after the key.
func checkVKLayout(id curve.ID) func(r io.ReaderAt, size int64) error {
	return func(r io.ReaderAt, size int64) error {
		l := newLayout(r, size, id)
		for _, p := range []struct {
			g2   bool
			name string
		}{{false, "[α]₁"}, {false, "[β]₁"}, {true, "[β]₂"}, {true, "[γ]₂"}, {false, "[δ]₁"}, {true, "[δ]₂"}} {
			l.point(p.g2, p.name)
		}
		l.points(false, "K")
		n := l.u32("committed public wires")
		for i := uint32(0); i < n && l.err == nil; i++ {
			l.skip(8*int64(l.u32("committed public wires")), "committed public wires")
		}
		n = l.u32("commitments")
		for i := uint32(0); i < n && l.err == nil; i++ {
			l.point(true, "commitment key")
			l.point(true, "commitment key")
		}
		return l.end("verifying key")
	}
}

// checkProofLayout checks a gnark proof (groth16/<curve> Proof.writeTo:
// [A]₁, [B]₂, [C]₁, the commitments, their proof of knowledge; of curve
// id) held in memory before gnark's decoder allocates
// by its commitment count, and that nothing follows it.
func checkProofLayout(data []byte, id curve.ID) error {
	l := newLayout(bytes.NewReader(data), int64(len(data)), id)
	l.point(false, "[A]₁")
	l.point(true, "[B]₂")
	l.point(false, "[C]₁")
	l.points(false, "commitments")
	l.point(false, "commitments' proof of knowledge")
	return l.end("proof")
}

// r1csCurve is the curve of the gnark circuit.r1cs in r (size bytes, its
// layout checked by checkR1CSLayout): the scalar field its body records
// (constraint.System.ScalarField, hex, in the CBOR section that ends the
// file), which gnark's decoder does not compare with the curve it decodes
// as. Only that section is read.
func r1csCurve(r io.ReaderAt, size int64) (curve.ID, error) {
	var head [32]byte
	if _, err := r.ReadAt(head[:], 32); err != nil {
		return 0, err
	}
	var off uint64 = 64
	for i := range 3 {
		off += binary.LittleEndian.Uint64(head[8*i:])
	}
	n := binary.LittleEndian.Uint64(head[24:])
	if off+n > uint64(size) {
		return 0, fmt.Errorf("its sections say more than its %d bytes: not a gnark r1cs", size)
	}
	body := make([]byte, n)
	if _, err := r.ReadAt(body, int64(off)); err != nil {
		return 0, err
	}
	dm, err := cbor.DecOptions{MaxArrayElements: 1<<31 - 1, MaxMapPairs: 1<<31 - 1}.DecMode()
	if err != nil {
		return 0, err
	}
	var sys struct{ ScalarField string }
	if err := dm.Unmarshal(body, &sys); err != nil {
		return 0, fmt.Errorf("its body is not gnark's CBOR (%v): not a gnark r1cs", err)
	}
	q, ok := new(big.Int).SetString(sys.ScalarField, 16)
	if !ok {
		return 0, fmt.Errorf("its scalar field %q is not a number: not a gnark r1cs", sys.ScalarField)
	}
	for _, id := range curve.All {
		if q.Cmp(id.ECC().ScalarField()) == 0 {
			return id, nil
		}
	}
	return 0, fmt.Errorf("a circuit over the field of modulus 0x%s: zkpipe proves on %s and %s only", q.Text(16), curve.BN254, curve.BLS12_381)
}
