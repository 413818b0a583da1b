package gpu

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// ─── bases streamed from pinned host memory ─────────────────────────────────
//
// A key whose bases do not fit the device beside a job (BasesOnHost, or
// BasesAuto when they do not) keeps them in page-locked host memory, taken
// once at Load and written once, as cuzk does on cards smaller than its
// SRS. Each operation over a base set then streams it through two device
// buffers of streamPiece points: piece p+1 is copied on a transfer lane's
// stream while piece p's kernels run, so the copy hides behind them where
// the bus keeps up. Every base set is copied once a job: batch-addition
// runs the tail MSM of each piece's significant scalars beside its ones
// (BatchAddG1, BatchAddG2) and keeps the sums for TailMSMG1 and MSMG2,
// which then only hand them over; H's MSM streams Z.
//
// A sparse query's significant scalars of piece p are those whose indexes
// fall in it: cudaQuery.cuts, counted as pin/transfer classifies. Their
// MSM reads the piece's buffer through their absolute indexes, so it is
// given the buffer's address less the piece's offset: the kernels add an
// index times the point size to it, landing in the buffer.

// BasesPlace says where a key's bases live between proofs (WithBases).
type BasesPlace int

const (
	// BasesAuto keeps them on the device where they fit beside one job
	// of the key (its smallest: ResidentBytes + JobBytes with one
	// significant scalar a query), and in pinned host memory otherwise.
	BasesAuto BasesPlace = iota
	// BasesOnDevice always uploads them (a key that does not fit is
	// refused by the device budget).
	BasesOnDevice
	// BasesOnHost always streams them from pinned host memory.
	BasesOnHost
)

// String is the place as --cuda-bases spells it.
func (p BasesPlace) String() string {
	switch p {
	case BasesOnDevice:
		return "device"
	case BasesOnHost:
		return "host"
	}
	return "auto"
}

// ParseBasesPlace reads auto, device or host.
func ParseBasesPlace(s string) (BasesPlace, error) {
	for _, p := range []BasesPlace{BasesAuto, BasesOnDevice, BasesOnHost} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("bases place %q: want auto, device or host", s)
}

// WithBases says where keys' bases live (default BasesAuto).
func WithBases(p BasesPlace) CUDAOption { return func(c *cudaConfig) { c.bases = p } }

// DefaultStreamPiece is the points of one streamed piece: 2^22, 384 MiB of
// BLS12-381's G1 bases and 768 MiB of its G2 a buffer, two buffers an
// operation; its MSM (about 25 ms over G1) outlasts its copy at PCIe's
// 25–50 GB/s.
const DefaultStreamPiece = 1 << 22

// WithStreamPiece sets the points of one streamed piece, a power of two of
// at least 64 (whole bitmap words): tests take small ones.
func WithStreamPiece(n int) CUDAOption { return func(c *cudaConfig) { c.streamPiece = n } }

// streams says whether k's bases stay in pinned host memory.
func (c *CUDA) streams(k *proofdata.Key) bool {
	switch c.basesPlace {
	case BasesOnHost:
		return true
	case BasesOnDevice:
		return false
	}
	return c.memTotal > 0 && c.deviceResidentBytes(k)+c.jobBytes(k, 1, 1, false) > int64(c.memTotal)
}

// baseBytes is what k's five base sets take, in the library's layout.
func baseBytes(k *proofdata.Key) int64 {
	p := k.Curve.Params()
	g1, g2 := int64(p.G1AffineBytes), int64(p.G2AffineBytes)
	return g1*int64(k.Size.A+k.Size.B+k.Size.K+k.Size.Z) + g2*int64(k.Size.B2)
}

// PinnedKeyBytes is the page-locked host memory Load keeps for k: its bases
// when they are streamed from the host, else 0.
func (c *CUDA) PinnedKeyBytes(k *proofdata.Key) int64 {
	if !c.streams(k) {
		return 0
	}
	return baseBytes(k)
}

// hostSink is deviceSink's twin for streamed bases: chunks copied into the
// pinned host buffers, by the stream's workers at once. Once closed it
// takes no more writes (the buffers may be freed).
type hostSink struct{ sinkParts[unsafe.Pointer] }

func (h *hostSink) Write(part proofdata.KeyParts, at, count int, points []byte) error {
	base, done, err := h.start(part, at, count, points)
	if err != nil {
		return err
	}
	defer done()
	copy(unsafe.Slice((*byte)(unsafe.Add(base, at*(len(points)/count))), len(points)), points)
	return nil
}

// pinHostBases takes pinned host memory for k's bases and copies in those
// its source has read (bases); the rest stream in through the returned
// sink. ptrs gets each set's address (A, B₁, K, Z, B₂).
func (c *CUDA) pinHostBases(k *proofdata.Key, bases [5]hostBuf) (block unsafe.Pointer, ptrs [5]unsafe.Pointer, sink *hostSink, err error) {
	total := baseBytes(k)
	var e cerr
	if err := e.err("pinned alloc", c.fn.hostAlloc(&block, uint64(max(total, 1)), e.p())); err != nil {
		return nil, ptrs, nil, fmt.Errorf("cuda: %s of pinned host memory for a key's bases: %w", mem.FormatBytes(total), err)
	}
	sink = &hostSink{newSinkParts[unsafe.Pointer]()}
	s := k.Size
	off := 0
	for i, n := range [5]int{s.A, s.B, s.K, s.Z, s.B2} {
		ptrs[i] = unsafe.Add(block, off)
		b := bases[i]
		if b.n > 0 {
			copy(unsafe.Slice((*byte)(ptrs[i]), b.n), unsafe.Slice((*byte)(b.src), b.n))
		}
		sink.dst[cudaBaseOrder[i]], sink.size[cudaBaseOrder[i]] = ptrs[i], n
		off += b.total
	}
	return block, ptrs, sink, nil
}

// streamSet runs each over a base set streamed from the host in pieces:
// each(p, lo, hi, buf) for piece p, points [lo, hi), copied to the device
// buffer buf; piece p+1's copy runs on a transfer lane while each runs on
// the compute stream cs. each's kernels must be done when it returns (the
// library's calls wait for them), so that buf can take the next copy.
func (c *CUDA) streamSet(ctx context.Context, cs uintptr, host unsafe.Pointer, n int, size int, each func(p, lo, hi int, buf uintptr) error) error {
	if n == 0 {
		return nil
	}
	piece := min(c.streamPiece, n)
	var bufs [2]uintptr
	var e cerr
	defer func() {
		for _, b := range bufs {
			if b != 0 {
				c.fn.devFree(b, cs, e.p())
			}
		}
	}()
	for i := range bufs {
		if i == 1 && piece == n {
			break // one piece: one buffer
		}
		b, err := c.alloc(piece*size, cs)
		if err != nil {
			return fmt.Errorf("streamed bases: %w", err)
		}
		bufs[i] = b
	}
	if err := e.err("sync", c.fn.streamSync(cs, e.p())); err != nil {
		return err
	}
	l, err := c.takeLane()
	if err != nil {
		return err
	}
	defer func() { c.lanes <- l }()
	copyPiece := func(p int) error {
		lo := p * piece
		hi := min(lo+piece, n)
		return e.err("upload", c.fn.h2dAsync(bufs[p&1], unsafe.Add(host, lo*size), uint64((hi-lo)*size), l.stream, e.p()))
	}
	if err := copyPiece(0); err != nil {
		return errors.Join(err, e.err("sync", c.fn.streamSync(l.stream, e.p())))
	}
	pieces := (n + piece - 1) / piece
	for p := range pieces {
		if err := e.err("upload sync", c.fn.streamSync(l.stream, e.p())); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p+1 < pieces {
			if err := copyPiece(p + 1); err != nil {
				return errors.Join(err, e.err("sync", c.fn.streamSync(l.stream, e.p())))
			}
		}
		lo := p * piece
		if err := each(p, lo, min(lo+piece, n), bufs[p&1]); err != nil {
			return errors.Join(err, e.err("sync", c.fn.streamSync(l.stream, e.p())))
		}
	}
	return nil
}

// pieceCuts counts, for a sparse query's ascending indexes idx, how many
// fall below each piece's end: cuts[p] to cuts[p+1] are piece p's.
func pieceCuts(counts []int) []int {
	cuts := make([]int, len(counts)+1)
	for p, k := range counts {
		cuts[p+1] = cuts[p] + k
	}
	return cuts
}

// countPieces adds idx's indexes to their pieces' counts.
func countPieces(counts []int, idx []uint32, piece int) {
	for _, j := range idx {
		counts[int(j)/piece]++
	}
}

// cutsOf is a host-classified query's cuts (n scalars, significant at idx).
func cutsOf(idx []uint32, n, piece int) []int {
	counts := make([]int, piecesOf(n, piece))
	countPieces(counts, idx, piece)
	return pieceCuts(counts)
}

// piecesOf is how many pieces of piece points n points make.
func piecesOf(n, piece int) int { return (n + piece - 1) / piece }

// streamedQuery sums one query over a base set streamed from the host:
// its ones (batch-addition) and the MSM of its significant scalars, a
// piece at a time.
func (c *CUDA) streamedQuery(ctx context.Context, r *cudaResident, cs uintptr, host unsafe.Pointer, n int, g2 bool, q *cudaQuery) (ones, tail proofdata.Point, err error) {
	p := r.key.Curve.Params()
	size := p.G1AffineBytes
	if g2 {
		size = p.G2AffineBytes
	}
	if q.idx != 0 && len(q.cuts) != piecesOf(n, c.streamPiece)+1 {
		return nil, nil, fmt.Errorf("streamed bases: a query of %d pieces has %d cuts", piecesOf(n, c.streamPiece), len(q.cuts))
	}
	add := func(acc *proofdata.Point, x proofdata.Point) {
		if *acc == nil {
			*acc = x
		} else if g2 {
			*acc = r.cv.addG2(*acc, x)
		} else {
			*acc = r.cv.addG1(*acc, x)
		}
	}
	err = c.streamSet(ctx, cs, host, n, size, func(pc, lo, hi int, buf uintptr) error {
		view := cudaQuery{len: hi - lo, ones: q.ones + uintptr(lo/8)}
		var o proofdata.Point
		var err error
		if g2 {
			o, err = r.cv.onesG2(c.fn, buf, &view, cs)
		} else {
			o, err = r.cv.onesG1(c.fn, buf, &view, cs)
		}
		if err != nil {
			return err
		}
		add(&ones, o)
		v := msmVec{scalars: q.vals + uintptr(lo*proofdata.ScalarBytes), n: hi - lo}
		bases := buf
		if q.idx != 0 {
			k0, k1 := q.cuts[pc], q.cuts[pc+1]
			v = msmVec{scalars: q.vals + uintptr(k0*proofdata.ScalarBytes), idx: q.idx + uintptr(4*k0), n: k1 - k0}
			bases = buf - uintptr(lo*size) // absolute indexes into the piece: see above
		} else if lo >= q.nvals {
			v.n = 0
		} else {
			v.n = min(hi, q.nvals) - lo
		}
		var t proofdata.Point
		if g2 {
			t, err = r.cv.msmG2(c.fn, msmTable{}, "msm g2 (streamed)", bases, v, cs)
		} else {
			var ts []proofdata.Point
			ts, err = r.cv.msmG1(c.fn, msmTable{}, "msm g1 (streamed)", bases, []msmVec{v}, cs)
			if err == nil {
				t = ts[0]
			}
		}
		if err != nil {
			return err
		}
		add(&tail, t)
		return nil
	})
	if err == nil && ones == nil { // no bases: both sums are ∞
		var ts []proofdata.Point
		if g2 {
			ones, err = r.cv.onesG2(c.fn, 0, &cudaQuery{}, cs)
			tail, _ = r.cv.msmG2(c.fn, msmTable{}, "msm g2", 0, msmVec{}, cs)
		} else if ones, err = r.cv.onesG1(c.fn, 0, &cudaQuery{}, cs); err == nil {
			ts, err = r.cv.msmG1(c.fn, msmTable{}, "msm g1", 0, []msmVec{{}}, cs)
			if err == nil {
				tail = ts[0]
			}
		}
	}
	return ones, tail, err
}

// streamedH is H's MSM over Z streamed from the host: h (st.a) a piece at
// a time.
func (c *CUDA) streamedH(ctx context.Context, r *cudaResident, st *cudaStaged, cs uintptr) (proofdata.Point, error) {
	n := r.key.HLen()
	var h proofdata.Point
	err := c.streamSet(ctx, cs, r.host[3], n, r.key.Curve.Params().G1AffineBytes, func(_, lo, hi int, buf uintptr) error {
		ps, err := r.cv.msmG1(c.fn, msmTable{}, "msm g1 (streamed)", buf, []msmVec{{st.a + uintptr(lo*proofdata.ScalarBytes), 0, hi - lo}}, cs)
		if err != nil {
			return err
		}
		if h == nil {
			h = ps[0]
		} else {
			h = r.cv.addG1(h, ps[0])
		}
		return nil
	})
	if err == nil && h == nil {
		ps, err := r.cv.msmG1(c.fn, msmTable{}, "msm g1", 0, []msmVec{{}}, cs)
		if err != nil {
			return nil, err
		}
		h = ps[0]
	}
	return h, err
}

// streamedG1 is batch-addition over A, B₁ and K streamed from the host,
// each set's tail MSM beside its ones: the ones are returned, the tails
// kept in st for TailMSMG1.
func (c *CUDA) streamedG1(ctx context.Context, r *cudaResident, st *cudaStaged, cs uintptr) (proofdata.G1Sums, error) {
	var ones, tails proofdata.G1Sums
	s := r.key.Size
	for i, set := range []struct {
		host unsafe.Pointer
		n    int
	}{{r.host[0], s.A}, {r.host[1], s.B}, {r.host[2], s.K}} {
		o, t, err := c.streamedQuery(ctx, r, cs, set.host, set.n, false, &st.q[i])
		if err != nil {
			return ones, fmt.Errorf("batch-add %s (streamed): %w", [3]string{"A", "B", "K"}[i], err)
		}
		*g1Query(&ones, i), *g1Query(&tails, i) = o, t
	}
	st.tails = &tails
	return ones, nil
}
