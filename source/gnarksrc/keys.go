package gnarksrc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/mem"
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
