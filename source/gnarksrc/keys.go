package gnarksrc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/boundedread"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/zkpipe/zkpipe/circuits"
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
// The errors name the file at fault, or both when either may be.
func checkKeys(ccs *cs.R1CS, pk *groth16bn254.ProvingKey, vk *groth16bn254.VerifyingKey, commits constraint.Groth16Commitments) error {
	nbPublic, nbSecret := ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables()
	nbWires := ccs.GetNbInternalVariables() + nbPublic + nbSecret
	nbConstraints := ccs.GetNbConstraints()
	privateCommitted := commits.GetPrivateCommitted()
	nbPrivateCommitted := 0
	for _, ws := range privateCommitted {
		nbPrivateCommitted += len(ws)
	}

	// ─── r1cs ↔ pk ───────────────────────────────────────────────────────────
	if len(pk.InfinityA) != nbWires || len(pk.InfinityB) != nbWires {
		return fmt.Errorf("%s: proving key is for %d wires, %s has %d: not of one circuit", PKFile, len(pk.InfinityA), R1CSFile, nbWires)
	}
	domain := uint64(1) << bits.Len64(uint64(max(nbConstraints, 1)-1))
	if pk.Domain.Cardinality != domain {
		return fmt.Errorf("%s: proving key's domain is %d, %s's %d constraints need %d: not of one circuit", PKFile, pk.Domain.Cardinality, R1CSFile, nbConstraints, domain)
	}
	if uint64(len(pk.G1.Z)) != domain-1 {
		return fmt.Errorf("%s: %d H points for a domain of %d (want %d)", PKFile, len(pk.G1.Z), domain, domain-1)
	}
	if want := nbSecret + ccs.GetNbInternalVariables() - nbPrivateCommitted - len(commits); len(pk.G1.K) != want {
		return fmt.Errorf("%s: proving key has %d private (K) points, %s has %d private wires: not of one circuit", PKFile, len(pk.G1.K), R1CSFile, want)
	}
	inA, inB := make([]bool, nbWires), make([]bool, nbWires)
	it := ccs.GetR1CIterator()
	for c := it.Next(); c != nil; c = it.Next() {
		for _, t := range c.L {
			if t.CoeffID() != constraint.CoeffIdZero && t.WireID() < nbWires {
				inA[t.WireID()] = true
			}
		}
		for _, t := range c.R {
			if t.CoeffID() != constraint.CoeffIdZero && t.WireID() < nbWires {
				inB[t.WireID()] = true
			}
		}
	}
	for i := range nbWires {
		if pk.InfinityA[i] == inA[i] || pk.InfinityB[i] == inB[i] {
			return fmt.Errorf("%s and %s disagree on which wires the A and B matrices use (wire %d): not of one circuit", R1CSFile, PKFile, i)
		}
	}
	if len(pk.CommitmentKeys) != len(commits) {
		return fmt.Errorf("%s: proving key has %d commitment keys, %s has %d commitments: not of one circuit", PKFile, len(pk.CommitmentKeys), R1CSFile, len(commits))
	}
	for i, ws := range privateCommitted {
		if ck := pk.CommitmentKeys[i]; len(ck.Basis) != len(ws) || len(ck.BasisExpSigma) != len(ws) {
			return fmt.Errorf("%s: commitment key %d is for %d wires, %s commits %d: not of one circuit", PKFile, i, len(ck.Basis), R1CSFile, len(ws))
		}
	}

	// ─── r1cs ↔ vk ───────────────────────────────────────────────────────────
	if want := nbPublic + len(commits); len(vk.G1.K) != want {
		return fmt.Errorf("%s: verifying key is for %d public wires, %s has %d (with %d commitments): not of one circuit", VKFile, len(vk.G1.K), R1CSFile, want, len(commits))
	}
	if len(vk.CommitmentKeys) != len(commits) {
		return fmt.Errorf("%s: verifying key has %d commitment keys, %s has %d commitments: not of one circuit", VKFile, len(vk.CommitmentKeys), R1CSFile, len(commits))
	}
	want := commits.GetPublicAndCommitmentCommitted(commits.CommitmentIndexes(), nbPublic)
	if len(vk.PublicAndCommitmentCommitted) != len(want) {
		return fmt.Errorf("%s: verifying key's committed public wires are not %s's: not of one circuit", VKFile, R1CSFile)
	}
	for i := range want {
		if !slices.Equal(vk.PublicAndCommitmentCommitted[i], want[i]) {
			return fmt.Errorf("%s: verifying key's committed public wires are not %s's: not of one circuit", VKFile, R1CSFile)
		}
	}

	// ─── pk ↔ vk ─────────────────────────────────────────────────────────────
	differs := func(what string) error {
		return fmt.Errorf("%s is not the verifying key of %s (%s differs): one of them is from another circuit or setup", VKFile, PKFile, what)
	}
	switch {
	case !vk.G1.Alpha.Equal(&pk.G1.Alpha):
		return differs("[α]₁")
	case !vk.G2.Beta.Equal(&pk.G2.Beta):
		return differs("[β]₂")
	case !vk.G2.Delta.Equal(&pk.G2.Delta):
		return differs("[δ]₂")
	// [β]₁ and [δ]₁ are in the vk "for compatibility": older keys may lack them
	case !vk.G1.Beta.IsInfinity() && !vk.G1.Beta.Equal(&pk.G1.Beta):
		return differs("[β]₁")
	case !vk.G1.Delta.IsInfinity() && !vk.G1.Delta.Equal(&pk.G1.Delta):
		return differs("[δ]₁")
	}
	for i := range commits {
		ck, cvk := &pk.CommitmentKeys[i], &vk.CommitmentKeys[i]
		if len(ck.Basis) == 0 {
			continue
		}
		ok, err := bn254.PairingCheck([]bn254.G1Affine{ck.Basis[0], ck.BasisExpSigma[0]}, []bn254.G2Affine{cvk.GSigmaNeg, cvk.G})
		if err != nil {
			return err
		}
		if !ok {
			return differs(fmt.Sprintf("commitment key %d", i))
		}
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
		br := bufio.NewReaderSize(in, 1<<20)
		cr := &countingReader{r: br}
		defer reportLoad(o, path, f.Size(), cr)()
		n, err := read(cr)
		if err != nil {
			return struct{}{}, fmt.Errorf("read %s: %w", path, err)
		}
		if k, err := br.Read(make([]byte, 1)); k > 0 || err != io.EOF {
			return struct{}{}, fmt.Errorf("%s: trailing bytes after the %s (gnark's decoder stopped at byte %d of %s)", path, what, n, sizeOf(f))
		}
		return struct{}{}, nil
	})
	return err
}

// countingReader counts the bytes read through it, for progress lines.
type countingReader struct {
	r io.Reader
	n atomic.Int64
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
// allows. Points are 32 (G1) or 64 (G2) bytes compressed and twice that
// raw, as the most significant bits of their first byte say
// (gnark-crypto's bn254 encoder, which writes one encoding a file).
type layout struct {
	r         io.ReaderAt
	size, pos int64
	err       error
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
	size := int64(fp.Bytes)
	if g2 {
		size *= 2
	}
	b := l.read(1, what)
	l.pos--                  // a peek
	if b[0]&(0b11<<6) == 0 { // gnark-crypto's mUncompressed: raw, both coordinates
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

// checkPKLayout checks a circuit.pk (groth16/bn254 ProvingKey.writeTo)
// against its size before gnark's decoder allocates by its counts: the
// domain a power of two of at most 2^circuits.MaxLogDomain (its twiddles
// are precomputed at read), every slice no longer than the file holds (so
// decoding takes at most twice the file: compressed points double), and
// nothing after the key. Raw and compressed keys alike. Whether the counts
// are the r1cs's is checkKeys's to say, once decoded.
func checkPKLayout(r io.ReaderAt, size int64) error {
	l := &layout{r: r, size: size}
	if d := l.u64("domain"); l.err == nil && (d == 0 || d&(d-1) != 0 || d > 1<<circuits.MaxLogDomain) {
		return fmt.Errorf("proving key's domain of %d is not a power of two up to 2^%d: not a gnark proving key zkpipe can use", d, circuits.MaxLogDomain)
	}
	l.skip(5*fr.Bytes+1, "domain")
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

// checkVKLayout checks a circuit.vk (groth16/bn254 VerifyingKey.writeTo)
// against its size before gnark's decoder allocates by its counts: every
// slice no longer than the file holds, nothing after the key.
func checkVKLayout() func(r io.ReaderAt, size int64) error {
	return func(r io.ReaderAt, size int64) error {
		l := &layout{r: r, size: size}
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

// checkProofLayout checks a gnark proof (groth16/bn254 Proof.writeTo:
// [A]₁, [B]₂, [C]₁, the commitments, their proof of knowledge) held in
// memory before gnark's decoder allocates by its commitment count, and that
// nothing follows it.
func checkProofLayout(data []byte) error {
	l := &layout{r: bytes.NewReader(data), size: int64(len(data))}
	l.point(false, "[A]₁")
	l.point(true, "[B]₂")
	l.point(false, "[C]₁")
	l.points(false, "commitments")
	l.point(false, "commitments' proof of knowledge")
	return l.end("proof")
}
