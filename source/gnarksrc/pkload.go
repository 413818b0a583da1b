package gnarksrc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/curve"
)

// ─── loading a proving key ───────────────────────────────────────────────────
//
// readProvingKey decodes gnark v0.16.3's proving-key encoding
// (backend/groth16/<curve>/marshal.go, readFrom) into gnark's own
// ProvingKey, as pk.UnsafeReadFrom does and into the same values, but with
// the point slices converted (raw) or decompressed over all cores as they
// are read: gnark-crypto's decoder
// converts a raw point at a time on one core as it reads it (two
// SetBytesCanonical each), which held a 2^26 BN254 key's 17.2 GiB to
// ~350 MB/s on the H200 host, 72 s. The layout, in order:
//
//	domain         fft.Domain.ReadFrom (its twiddles precomputed at read:
//	               here, beside the reading of the rest)
//	[α]₁ [β]₁ [δ]₁ one point each
//	A B Z K        G1 slices: a big-endian u32 count, then the points
//	[β]₂ [δ]₂      one point each
//	B₂             a G2 slice
//	wires, NbInfinityA, NbInfinityB   u64 each
//	InfinityA, InfinityB              a byte a wire each
//	commitments    a u32 count, then per commitment its Pedersen key: two
//	               G1 slices (Basis, BasisExpSigma), of one length
//
// Everything but the point slices and the infinity flags goes through
// gnark-crypto's own decoder. A slice's encoding is that of its first
// point, by the metadata bits of its first byte as gnark-crypto reads them:
// raw (pk.WriteRawTo, zkpipe's setup) or compressed (gnark's default
// pk.WriteTo). Either way it is read in chunks of loadChunkBytes,
// sequentially, each chunk's points converted in place into the slice by
// one of GOMAXPROCS workers while the next chunks are read: 2·GOMAXPROCS
// chunk buffers at most, the key itself never twice in memory. A raw point
// is two (G2: four) SetBytesCanonical; a compressed one gnark-crypto's
// one-point decode, a square root (gnark-crypto's slice decoder takes the
// X coordinates on one core first, then the roots in parallel). A slice
// must hold points of one encoding (gnark writes one encoding a key; the
// layout check sizes every point of a slice by its first too).
//
// The checks are UnsafeReadFrom's: coordinates below the base field's
// modulus, infinity well encoded, valid metadata bits, a compressed
// point's X on the curve (its square root exists); no subgroup check on
// the key's own points. Stricter in two ways: a raw point must be on the
// curve (errNotOnCurve: a square and a product or two a point, about 50 ns
// for BN254's G1, beside 37 for its conversion; a damaged raw key is
// refused at load, naming the point, rather than spoiling every proof),
// and BLS12-381's invalid metadata bits (0b001, 0b011, 0b111) in a
// compressed slice are refused, which gnark-crypto's slice decoder lets
// through (its one-point decode refuses them). The commitment keys are read as
// gnark reads them even there, with pedersen's ReadFrom, so with subgroup
// checks: done in the workers too.
//
// With def, the parts def wants are left unread where the reader can skip
// (pkdefer.go): their slices' places are recorded in def, the domain's
// tables are not computed (its constants are read), and pk's slices of them
// stay nil.
func readProvingKey(id curve.ID, pk groth16.ProvingKey, def *pkDeferral, trusted bool) func(r io.Reader) (int64, error) {
	return func(r io.Reader) (int64, error) {
		read := gnarkCurves[id].readPK
		if read == nil {
			return 0, fmt.Errorf("no proving-key reader for %s", id)
		}
		return read(r, pk, def, trusted)
	}
}

// loadChunkBytes is how much of a slice one worker converts at a time
// (16384 BN254 G1 points): large enough that a chunk's hand-over (~1 µs)
// is nothing beside its conversion (~1 ms), small enough that 2·GOMAXPROCS
// of them are a few tens of MiB.
var loadChunkBytes = 1 << 20

// errMixedEncoding is a point not of its slice's encoding.
// errNotOnCurve: a raw point whose coordinates are below the modulus but
// do not satisfy the curve's equation (a damaged key file: gnark's
// UnsafeReadFrom would take it and every proof would fail its check).
var errNotOnCurve = errors.New("not on the curve")

var errMixedEncoding = errors.New("a point not of its slice's first's encoding (raw, compressed): not a key as gnark writes it")

// keyLoader is the reader a proving key is decoded through: it counts the
// bytes read, and holds the chunk buffers its slices reuse.
type keyLoader struct {
	r       io.Reader
	n       int64
	workers int
	spare   [][]byte // chunk buffers for the next slice
	def     *pkDeferral
	// trusted: the file has the digest setup wrote (PKDigestFile), its
	// point slices are not checked for subgroup membership
	trusted bool
}

func newKeyLoader(r io.Reader) *keyLoader {
	return &keyLoader{r: r, workers: runtime.GOMAXPROCS(0)}
}

func (l *keyLoader) Read(p []byte) (int, error) {
	k, err := l.r.Read(p)
	l.n += int64(k)
	return k, err
}

// sliceHead reads a point slice's count (a big-endian u32) and, when it is
// not zero, the first bytes of its first point, as many as first (a
// compressed point's size: its metadata, and all of it when compressed).
// head holds both, as read, for whichever decoder reads the slice.
func (l *keyLoader) sliceHead(first int) (head []byte, n int, err error) {
	head = make([]byte, 4, 4+first)
	if _, err := io.ReadFull(l, head); err != nil {
		return nil, 0, truncated(err, "its length")
	}
	n = int(binary.BigEndian.Uint32(head))
	if n == 0 {
		return head, 0, nil
	}
	head = head[:4+first]
	if _, err := io.ReadFull(l, head[4:]); err != nil {
		return nil, 0, truncated(err, fmt.Sprintf("point 0 of %d", n))
	}
	return head, n, nil
}

// points reads n points of size bytes each, the first len(pre) of
// which are in pre already, calling set(i, b) with point i's bytes; set
// converts it into its place, from up to l.workers goroutines at once (each
// i once, so set may write element i of a slice unlocked). Each worker
// takes its own set from newSet, once, so that a set may keep scratch (a
// decoder and its reader) instead of allocating a point. Chunks are read
// in order, on the caller's goroutine, and handed to the workers; once one
// fails, no more are read. The error is the failing point of lowest index
// (a truncation counts as failing at its point), so that a file fails the
// same way each time.
func (l *keyLoader) points(pre []byte, n, size int, newSet func() func(i int, b []byte) error) error {
	return l.chunks(pre, n, size, func(int) pointWorker { return pointWorker{set: newSet()} })
}

// pointWorker is one worker's part in keyLoader.chunks: set converts point
// i (as points' set does); begin, when not nil, is told each chunk's first
// index before its points, and done, when not nil, each chunk's first index
// and count after them (a stream hands the chunk on there).
type pointWorker struct {
	begin func(start int)
	set   func(i int, b []byte) error
	done  func(start, count int) error
}

// chunks is points with a worker of newWorker's a goroutine, told of each
// chunk (per points at most, the argument newWorker is given).
func (l *keyLoader) chunks(pre []byte, n, size int, newWorker func(per int) pointWorker) error {
	per := max(1, min(n, loadChunkBytes/size)) // points a chunk
	chunks := (n + per - 1) / per
	workers := max(1, min(l.workers, chunks))
	free := make(chan []byte, 2*workers) // never blocks a worker: it holds every buffer
	for range min(2*workers, chunks) {
		var b []byte
		if k := len(l.spare); k > 0 {
			b, l.spare = l.spare[k-1], l.spare[:k-1]
		}
		free <- b
	}

	type chunk struct {
		start int
		b     []byte
	}
	var (
		mu      sync.Mutex
		errAt   = n // the lowest failing point's index
		firstEr error
		failed  = make(chan struct{})
		once    sync.Once
	)
	fail := func(i int, err error) {
		mu.Lock()
		if i < errAt {
			errAt, firstEr = i, err
		}
		mu.Unlock()
		once.Do(func() { close(failed) })
	}
	work := make(chan chunk)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			w := newWorker(per)
			for c := range work {
				if w.begin != nil {
					w.begin(c.start)
				}
				count, ok := len(c.b)/size, true
				for k := range count {
					if err := w.set(c.start+k, c.b[k*size:(k+1)*size]); err != nil {
						fail(c.start+k, fmt.Errorf("point %d of %d: %w", c.start+k, n, err))
						ok = false
						break
					}
				}
				if ok && w.done != nil {
					if err := w.done(c.start, count); err != nil {
						fail(c.start, err)
					}
				}
				free <- c.b
			}
		})
	}

read:
	for start := 0; start < n; start += per {
		b := <-free
		if cap(b) < per*size {
			b = make([]byte, per*size)
		}
		b = b[:min(per, n-start)*size]
		k := 0
		if start == 0 {
			k = copy(b, pre)
		}
		if m, err := io.ReadFull(l, b[k:]); err != nil {
			at := start + (k+m)/size
			fail(at, truncated(err, fmt.Sprintf("point %d of %d", at, n)))
			free <- b
			break
		}
		select {
		case work <- chunk{start, b}:
		case <-failed:
			free <- b
			break read
		}
	}
	close(work)
	wg.Wait()
	close(free)
	for b := range free {
		if b != nil {
			l.spare = append(l.spare, b)
		}
	}
	return firstEr
}

// truncated says that the file ended inside what: gnark-crypto's decoders
// say only "unexpected EOF".
func truncated(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated: the file ends in %s (%w)", what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// flags reads len(f) flags, a byte each, true when not zero, as
// gnark-crypto's decoder reads a []bool (encoding/binary) but without its
// reflection: some 13 ns a flag, two flags a wire, 1.7 s on one core for
// 2^26 wires.
func (l *keyLoader) flags(f []bool) error {
	buf := make([]byte, min(len(f), 1<<20))
	for done := 0; done < len(f); {
		b := buf[:min(len(buf), len(f)-done)]
		if m, err := io.ReadFull(l, b); err != nil {
			return truncated(err, fmt.Sprintf("flag %d of %d", done+m, len(f)))
		}
		for i, x := range b {
			f[done+i] = x != 0
		}
		done += len(b)
	}
	return nil
}

// zeroed reports whether first and every byte of rest are zero: a point
// at infinity's encoding once its metadata bits are masked off.
func zeroed(first byte, rest []byte) bool {
	if first != 0 {
		return false
	}
	for _, b := range rest {
		if b != 0 {
			return false
		}
	}
	return true
}
