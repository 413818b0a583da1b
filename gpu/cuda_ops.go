package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// The CUDA library proves on BN254 and BLS12-381 (gpu/cuda: its kernels
// are templates over the curve, each entry point takes the curve's id).
// Everything curve-specific on this side is a curve's cudaCurveOps,
// generated per curve (internal/generator/templates/gpu_cuda.go.tmpl:
// gpu/cuda_bn254.go, gpu/cuda_bls12381.go); the rest reads device pointers,
// scalars (four words on both curves) and proofdata.Points.

// cudaCurveOps is one curve's half of the CUDA backend.
type cudaCurveOps interface {
	id() int32                                   // the library's id, ZK_CURVE_*
	load(k *proofdata.Key) (cudaKeyParts, error) // k's bases and domain constants
	// msmG1 runs the G1 MSMs of vecs (1 to MaxMSMBatch) against the same
	// bases (or table) in one library call; msmG2 one G2 MSM.
	msmG1(f *cudaFns, t msmTable, op string, bases uintptr, vecs []msmVec, s uintptr) ([]proofdata.Point, error)
	msmG2(f *cudaFns, t msmTable, op string, bases uintptr, v msmVec, s uintptr) (proofdata.Point, error)
	onesG1(f *cudaFns, bases uintptr, q *cudaQuery, s uintptr) (proofdata.Point, error)
	onesG2(f *cudaFns, bases uintptr, q *cudaQuery, s uintptr) (proofdata.Point, error)
	// addG1 and addG2 are a + b of two points as msmG1/onesG1 (msmG2,
	// onesG2) return them: streamed pieces' sums (cuda_streamed.go)
	addG1(a, b proofdata.Point) proofdata.Point
	addG2(a, b proofdata.Point) proofdata.Point
}

// cudaKeyParts is what Load uploads of a key: its bases (A, B₁, K, Z, B₂),
// its domain's constants for zk_domain_tables, and 1/Z on the coset.
type cudaKeyParts struct {
	bases  [5]hostBuf
	consts [6]proofdata.Scalar
	zinv   proofdata.Scalar
}

// cudaBaseParts are a key's parts in cudaKeyParts.bases, in its order.
const cudaBaseParts = proofdata.PartA | proofdata.PartB1 | proofdata.PartK | proofdata.PartZ | proofdata.PartB2

var cudaBaseOrder = [5]proofdata.KeyParts{proofdata.PartA, proofdata.PartB1, proofdata.PartK, proofdata.PartZ, proofdata.PartB2}

// deviceSink is where a key's deferred bases stream to at Load
// (proofdata.BaseSink): each chunk straight from its reader's buffer into
// the part's device buffer, through a transfer lane's pinned buffers, so
// no part is ever whole on the host. Writes run from the stream's workers
// at once, a lane each. Once closed (Stream returned, perhaps abandoned by
// a read's deadline while a worker still writes) it takes no more writes:
// the buffers may be freed.
type deviceSink struct {
	c *CUDA
	sinkParts[uintptr]
}

// sinkParts is what a Load's sink knows of the key's parts: where each
// part's points go (a device or a host address, P) and how many it holds,
// and, once closed, that the load is over.
type sinkParts[P any] struct {
	dst  map[proofdata.KeyParts]P
	size map[proofdata.KeyParts]int // points a part's buffer holds
	mu   sync.RWMutex               // writes in flight (read) against close
	shut bool
}

func newSinkParts[P any]() sinkParts[P] {
	return sinkParts[P]{dst: map[proofdata.KeyParts]P{}, size: map[proofdata.KeyParts]int{}}
}

// start begins a write of count points at at of part: the part's address,
// with the read lock held until the caller's done (or an error: nothing held).
func (s *sinkParts[P]) start(part proofdata.KeyParts, at, count int, points []byte) (base P, done func(), err error) {
	s.mu.RLock()
	base, ok := s.dst[part]
	switch {
	case s.shut:
		err = fmt.Errorf("cuda: key load over")
	case !ok || count <= 0 || at < 0 || at+count > s.size[part] || len(points)%count != 0:
		err = fmt.Errorf("cuda: %d points at %d of key part %b: not in its %d", count, at, part, s.size[part])
	}
	if err != nil {
		s.mu.RUnlock()
		return base, nil, err
	}
	return base, s.mu.RUnlock, nil
}

func (s *sinkParts[P]) close() {
	s.mu.Lock()
	s.shut = true
	s.mu.Unlock()
}

func (d *deviceSink) Write(part proofdata.KeyParts, at, count int, points []byte) error {
	base, done, err := d.start(part, at, count, points)
	if err != nil {
		return err
	}
	defer done()
	l, err := d.c.takeLane()
	if err != nil {
		return err
	}
	defer func() { d.c.lanes <- l }()
	var e cerr
	dst := base + uintptr(at*(len(points)/count))
	return e.err("upload", d.c.fn.upload(dst, unsafe.Pointer(&points[0]), uint64(len(points)), l.pin[0], l.pin[1], uint64(d.c.pinBytes), l.stream, e.p()))
}

// loadSink takes a Load's deferred bases until closed.
type loadSink interface {
	proofdata.BaseSink
	close()
}

// cudaCurve is k's curve's half, or errors.ErrUnsupported naming it.
func cudaCurve(k *proofdata.Key) (cudaCurveOps, error) {
	cv, ok := cudaCurves[k.Curve]
	if !ok {
		return nil, fmt.Errorf("cuda: no %s kernels (the CPU backend proves %s): %w", k.Curve, k.Curve, errors.ErrUnsupported)
	}
	return cv, nil
}

// ─── Load ────────────────────────────────────────────────────────────────────

type cudaResident struct {
	c   *CUDA
	key *proofdata.Key
	cv  cudaCurveOps     // the key's curve
	one proofdata.Scalar // 1 in its Fr, for classification

	a, b1, k, z, b2      uintptr // bases
	tw, twinv, gn, ginvn uintptr // NTT tables
	logn                 int
	zinv                 proofdata.Scalar
	tables               map[uintptr]msmTable // by base set (cuda_table.go)
	tailsAtOnce          int                  // c.tailsAtOnce(key), fixed at Load
	// streamed: the bases are not on the device (a, b1, k, z and b2 are 0)
	// but at host (A, B₁, K, Z, B₂) in hostBlock, pinned memory streamed to
	// the device piece by piece (cuda_streamed.go)
	streamed  bool
	hostBlock unsafe.Pointer
	host      [5]unsafe.Pointer
	freeOnce  sync.Once
	freeErr   error
}

func (r *cudaResident) Key() *proofdata.Key { return r.key }

// Close frees the device copy of the key. Closing the backend closes its
// open residents.
func (r *cudaResident) Close() error {
	if err := r.c.enter(); err != nil {
		return nil // the backend's Close freed it
	}
	defer r.c.exit()
	r.c.liveMu.Lock()
	if r.c.residents != nil {
		delete(r.c.residents, r)
	}
	r.c.liveMu.Unlock()
	return r.free()
}

// free gives the device memory back, once.
func (r *cudaResident) free() error {
	r.freeOnce.Do(func() {
		// On the transfer stream, where the bases were allocated: no
		// operation uses them any more (each waits for its kernels).
		c := r.c
		var e cerr
		r.freeErr = r.freeTables(c.xfer)
		if r.hostBlock != nil {
			r.freeErr = errors.Join(r.freeErr, e.err("pinned free", c.fn.hostFree(r.hostBlock, e.p())))
		}
		for _, p := range []uintptr{r.a, r.b1, r.k, r.z, r.b2, r.tw, r.twinv, r.gn, r.ginvn} {
			if p != 0 {
				r.freeErr = errors.Join(r.freeErr, e.err("free", c.fn.devFree(p, c.xfer, e.p())))
			}
		}
		r.freeErr = errors.Join(r.freeErr, e.err("sync", c.fn.streamSync(c.xfer, e.p())))
	})
	return r.freeErr
}

// ResidentBytes is the device memory Load takes for k: its bases (unless
// they are streamed from the host: PinnedKeyBytes), their MSM tables if
// any, and the domain's four tables (the twiddles, n/2 each, and the
// two-level coset tables: cosetEntries).
func (c *CUDA) ResidentBytes(k *proofdata.Key) int64 {
	if c.streams(k) {
		return domainBytes(k)
	}
	return c.deviceResidentBytes(k)
}

// deviceResidentBytes is ResidentBytes for k's bases on the device.
func (c *CUDA) deviceResidentBytes(k *proofdata.Key) int64 {
	return baseBytes(k) + domainBytes(k) + c.keyTableBytes(k)
}

// domainBytes is what k's domain's tables take on the device.
func domainBytes(k *proofdata.Key) int64 {
	n := int64(k.N())
	logn := bits.TrailingZeros64(uint64(n))
	return proofdata.ScalarBytes * (2*max(n/2, 1) + 2*int64(cosetEntries(logn)))
}

// cosetEntries is the length of a domain of 2^logn's two-level coset table
// (gpu/cuda/ntt.cuh, coset_entries): 2^h + 2^(logn−h), h = ⌈logn/2⌉. At
// 2^27 it is 24,576 scalars where a table of n was 4 GiB.
func cosetEntries(logn int) int {
	h := (logn + 1) / 2
	return 1<<h + 1<<(logn-h)
}

// JobBytes is the most device memory one job of k holds at once, whose
// queries hold at most tail significant scalars each (proofdata.Vectors.Tail;
// tail ≤ 0: each query's length). The job's phases on the device:
//
//	staged   a, b, c padded to n, and the queries (bitmaps; values and
//	         indexes for the tail) as pin/transfer leaves them
//	NTT      the same: H's NTTs work in place in a, b and c
//	MSM_H    a (h) and the queries, with H's MSM scratch: b and c are
//	         freed once h is computed
//	tails    the queries, with the scratch of the MSMs that run at once
//	         (msmScratchBytes): the tail's A, B₁ and K on up to
//	         tailsAtOnce(k) compute streams (the largest of them), or B₂'s
//
// It is the largest phase. An MSM's scratch is bounded by its pieces
// (CUDAConfig.MSMPieceLog): a 2^27 job of BLS12-381 holds 12 GiB of a, b, c
// and its queries at the NTT, where one run of H's MSM alone took 48 GiB.
//
// With its bases streamed from the host (PinnedKeyBytes), a job holds two
// device buffers of a piece's points beside its MSMs', whose runs are a
// piece long (cuda_streamed.go).
func (c *CUDA) JobBytes(k *proofdata.Key, tail int) int64 {
	streamed := c.streams(k)
	return c.jobBytes(k, tail, c.tailsAtOnce(k), streamed)
}

// tailsAtOnce is how many of a job of k's tail MSMs run at once: the
// backend's tailStreams, or one where a job holding that many MSMs'
// scratch (its queries at their smallest) would not fit on the device
// beside k's bases.
func (c *CUDA) tailsAtOnce(k *proofdata.Key) int {
	s := c.tailStreams()
	if c.streams(k) {
		return 1 // batch-addition runs the tails, a base set at a time
	}
	if s > 1 && c.memTotal > 0 && c.ResidentBytes(k)+c.jobBytes(k, 0, s, false) > int64(c.memTotal) {
		return 1
	}
	return s
}

// queryBytes is what one query of q scalars holds on the device with at
// most tail of them significant (tail ≤ 0: all may be): its bitmap, and
// values and indexes for the tail (classifyQueries allocates them so).
func queryBytes(q, tail int) int64 {
	t := q
	if tail > 0 {
		t = min(q, tail)
	}
	return 8*int64((q+63)/64) + int64(t)*(proofdata.ScalarBytes+4)
}

// jobBytes is JobBytes with at most streams tail MSMs at once, its bases
// streamed from the host or not.
func (c *CUDA) jobBytes(k *proofdata.Key, tail, streams int, streamed bool) int64 {
	n := int64(k.N())
	var queries int64
	for _, q := range []int{k.Size.A, k.Size.B, k.Size.K} {
		queries += queryBytes(q, tail)
	}
	id := k.Curve
	msmLen := func(q int) int {
		if tail > 0 {
			q = min(q, tail)
		}
		if streamed {
			q = min(q, c.streamPiece)
		}
		return q
	}
	var staging int64
	if streamed {
		p := id.Params()
		size := int64(p.G1AffineBytes)
		if k.Size.B2 > 0 {
			size = int64(p.G2AffineBytes)
		}
		staging = 2 * int64(c.streamPiece) * size
	}
	tails := []int64{c.msmScratchBytes(id, msmLen(k.Size.A), false), c.msmScratchBytes(id, msmLen(k.Size.B), false),
		c.msmScratchBytes(id, msmLen(k.Size.K), false)}
	slices.Sort(tails)
	var tailScratch int64
	for _, t := range tails[len(tails)-streams:] {
		tailScratch += t
	}
	v := n * proofdata.ScalarBytes // one of a, b, c
	hLen := k.HLen()
	if streamed {
		hLen = min(hLen, c.streamPiece)
	}
	return queries + max(3*v, v+staging+c.msmScratchBytes(id, hLen, false), staging+tailScratch,
		staging+c.msmScratchBytes(id, msmLen(k.Size.B), true), staging+c.onesScratchBytes(k))
}

// onesScratchBytes is what batch-addition holds at most: a partial sum a
// bitmap word of the largest base set (gpu/cuda/driver.cuh, ones_run), in
// G2 for B₂.
func (c *CUDA) onesScratchBytes(k *proofdata.Key) int64 {
	p := k.Curve.Params()
	g1, g2 := 2*int64(p.G1AffineBytes), 2*int64(p.G2AffineBytes) // XYZZ: twice the affine size
	words := func(q int) int64 { return int64((q+63)/64) + 1 }
	return max(words(k.Size.A)*g1, words(k.Size.B)*g1, words(k.Size.K)*g1, words(k.Size.B2)*g2)
}

// tailStreams is how many of one job's tail MSMs run at once.
func (c *CUDA) tailStreams() int {
	if !c.tailSplit {
		return 1
	}
	return min(3, len(c.allComp))
}

// msmScratchBytes is the library's bound on what msm_run_batch (gpu/cuda/driver.cuh,
// msm_scratch_bytes) holds at once for n scalars over G1 or G2 bases of
// curve id, as its knobs plan the MSM. The bound cannot fail; should a
// library say otherwise (or the curve be one it has no kernels for), the
// job is counted as too large for any budget (the governor then refuses it
// at once, naming the sizes) rather than as small.
func (c *CUDA) msmScratchBytes(id curve.ID, n int, g2 bool) int64 {
	if n == 0 {
		return 0
	}
	cv, ok := cudaCurves[id]
	if !ok {
		return math.MaxInt64 / 4
	}
	var out uint64
	var e cerr
	if e.err("msm scratch", c.fn.msmScratch(c.ctx, cv.id(), uint64(n), g2Flag(g2), &out, e.p())) != nil || out > math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return int64(out)
}

func g2Flag(g2 bool) int32 {
	if g2 {
		return 1
	}
	return 0
}

// Load uploads the key's bases and builds the NTT tables on the device.
// A key of a curve the library has no kernels for is
// errors.ErrUnsupported, naming it.
func (c *CUDA) Load(k *proofdata.Key) (proofdata.Resident, error) {
	l, err := c.beginLoad(k)
	if err != nil {
		return nil, err
	}
	return l.finish(k.Stream(l.parts, l))
}

// cudaLoad is a Load begun: the key's device buffers allocated at their
// full size, the bases its source has read uploaded, and those left
// unread (parts) waiting for a stream of them to Write. Load streams them
// itself; Multi streams a key file once for all its devices (multiLoad).
// finish ends it, whatever happened.
type cudaLoad struct {
	c     *CUDA
	r     *cudaResident
	parts proofdata.KeyParts // the deferred bases to stream here
	sink  loadSink           // where they go: deviceSink, or hostSink for streamed bases
	cv    cudaCurveOps
	kp    cudaKeyParts
}

// beginLoad allocates k's bases on the device and uploads those on the
// host; the load holds the backend open (enter) until finish.
func (c *CUDA) beginLoad(k *proofdata.Key) (*cudaLoad, error) {
	cv, err := cudaCurve(k)
	if err != nil {
		return nil, err
	}
	kp, err := cv.load(k)
	if err != nil {
		return nil, err
	}
	n := k.N()
	if n&(n-1) != 0 || n == 0 || n > 1<<30 {
		return nil, fmt.Errorf("cuda: domain of %d is not a power of two ≤ 2^30", n)
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	r := &cudaResident{c: c, key: k, cv: cv, one: proofdata.One(k.Curve), logn: bits.TrailingZeros(uint(n)), zinv: kp.zinv,
		tailsAtOnce: c.tailsAtOnce(k), streamed: c.streams(k)}
	if r.streamed {
		block, ptrs, sink, err := c.pinHostBases(k, kp.bases)
		if err != nil {
			c.exit()
			return nil, err
		}
		r.hostBlock, r.host = block, ptrs
		return &cudaLoad{c: c, r: r, parts: k.Deferred() & cudaBaseParts, cv: cv, kp: kp, sink: sink}, nil
	}
	p, err := c.stage(kp.bases[:])
	if err != nil {
		err = errors.Join(err, r.free())
		c.exit()
		return nil, err
	}
	r.a, r.b1, r.k, r.z, r.b2 = p[0], p[1], p[2], p[3], p[4]
	sink := &deviceSink{c: c, sinkParts: newSinkParts[uintptr]()}
	s := k.Size
	for i, n := range [5]int{s.A, s.B, s.K, s.Z, s.B2} {
		sink.dst[cudaBaseOrder[i]], sink.size[cudaBaseOrder[i]] = p[i], n
	}
	return &cudaLoad{c: c, r: r, parts: k.Deferred() & cudaBaseParts, cv: cv, kp: kp, sink: sink}, nil
}

// Write takes a chunk of the deferred bases (proofdata.BaseSink): see
// deviceSink.
func (l *cudaLoad) Write(part proofdata.KeyParts, at, count int, points []byte) error {
	return l.sink.Write(part, at, count, points)
}

// finish closes the sink (a write still in flight from an abandoned stream
// is refused from now on) and, unless streamErr (the stream's error, or
// this device's own) is set, builds the domain's tables and makes the key
// resident; on any error it frees everything the load holds.
func (l *cudaLoad) finish(streamErr error) (proofdata.Resident, error) {
	c, r := l.c, l.r
	defer c.exit()
	l.sink.close()
	err := streamErr
	if err == nil {
		err = func() error {
			n := 1 << r.logn
			for _, t := range []struct {
				p *uintptr
				n int
			}{{&r.tw, max(n/2, 1)}, {&r.twinv, max(n/2, 1)}, {&r.gn, cosetEntries(r.logn)}, {&r.ginvn, cosetEntries(r.logn)}} {
				var err error
				if *t.p, err = c.alloc(t.n*proofdata.ScalarBytes, c.xfer); err != nil {
					return err
				}
			}
			var e cerr
			if err := e.err("domain", c.fn.domainTables(l.cv.id(), r.tw, r.twinv, r.gn, r.ginvn, int32(r.logn), &l.kp.consts[0], c.xfer, e.p())); err != nil {
				return err
			}
			return r.buildTables()
		}()
	}
	if err != nil {
		return nil, errors.Join(err, r.free())
	}
	c.liveMu.Lock()
	c.residents[r] = struct{}{}
	c.liveMu.Unlock()
	return r, nil
}

// ─── Transfer ────────────────────────────────────────────────────────────────

type cudaQuery struct {
	len, nvals int
	ones       uintptr // bitmap, (len+63)/64 words
	idx        uintptr // 0 when dense
	vals       uintptr
	// cuts: with bases streamed from the host, the significant scalars of
	// piece p are [cuts[p], cuts[p+1]) (a sparse query's; cuda_streamed.go)
	cuts []int
}

type cudaStaged struct {
	a, b, c uintptr // n elements each, zero-padded
	q       [3]cudaQuery
	bufs    []uintptr
	// with bases streamed from the host, batch-addition's pass over each
	// base set also runs its tail MSM: their sums, for TailMSMG1 and MSMG2
	tails  *proofdata.G1Sums
	tailB2 proofdata.Point
}

// Transfer uploads one proof's vectors (a, b, c padded to n with zeros, and
// the classified queries) through the pinned buffers.
func (c *CUDA) Transfer(ctx context.Context, res proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error) {
	r, ok := res.(*cudaResident)
	if !ok {
		return nil, fmt.Errorf("cuda: resident of another backend")
	}
	k := r.key
	n := k.N()
	if len(v.A) > n || len(v.B) > n || len(v.C) > n {
		return nil, fmt.Errorf("transfer: %d/%d/%d evaluations for a domain of %d", len(v.A), len(v.B), len(v.C), n)
	}
	for _, q := range []struct {
		name string
		q    *proofdata.Query
		nb   int
	}{{"A", &v.QA, k.Size.A}, {"B", &v.QB, k.Size.B}, {"K", &v.QK, k.Size.K}} {
		if err := checkQuery(q.name, q.q, q.nb); err != nil {
			return nil, err
		}
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	// a, b, c padded to n; per query: ones bitmap, values, indexes (sparse)
	bufs := []hostBuf{bufOf(v.A, n), bufOf(v.B, n), bufOf(v.C, n)}
	for _, q := range []*proofdata.Query{&v.QA, &v.QB, &v.QK} {
		words := (q.Len + 63) / 64
		bufs = append(bufs, bufOf(q.Ones[:words], words), bufOf(q.Vals, len(q.Vals)))
		if !q.Dense {
			bufs = append(bufs, bufOf(q.Idx, len(q.Idx)))
		}
	}
	p, err := c.stage(bufs)
	if err != nil {
		return nil, err
	}
	st := &cudaStaged{a: p[0], b: p[1], c: p[2], bufs: p}
	next := 3
	for i, q := range []*proofdata.Query{&v.QA, &v.QB, &v.QK} {
		dq := &st.q[i]
		dq.len, dq.nvals = q.Len, len(q.Vals)
		dq.ones, dq.vals = p[next], p[next+1]
		next += 2
		if !q.Dense {
			dq.idx = p[next]
			next++
			if r.streamed {
				dq.cuts = cutsOf(q.Idx, q.Len, c.streamPiece)
			}
		}
	}
	c.liveMu.Lock()
	c.staged[st] = struct{}{}
	c.liveMu.Unlock()
	s := &proofdata.Staged{Resident: res, Host: v, Device: st}
	if err := ctx.Err(); err != nil {
		c.free(s)
		return nil, err
	}
	return s, nil
}

// Free releases the device memory Transfer took (back to the pool). After
// Close it does nothing: Close freed it.
func (c *CUDA) Free(s *proofdata.Staged) {
	if c.enter() != nil {
		return
	}
	defer c.exit()
	c.free(s)
}

func (c *CUDA) free(s *proofdata.Staged) {
	st, ok := s.Device.(*cudaStaged)
	if !ok || st == nil {
		return
	}
	c.liveMu.Lock()
	if c.staged != nil {
		delete(c.staged, st)
	}
	c.liveMu.Unlock()
	c.freeStaged(st)
	s.Device = nil
}

// freeStaged gives st's buffers back to the pool on the transfer stream,
// where Transfer allocated them: every operation on them has waited for its
// kernels, so no stream still reads them.
func (c *CUDA) freeStaged(st *cudaStaged) error {
	var err error
	var e cerr
	for _, p := range st.bufs {
		err = errors.Join(err, e.err("free", c.fn.devFree(p, c.xfer, e.p())))
	}
	st.bufs = nil
	return err
}

// compute enters an operation on s's device buffers; the caller must call
// the returned done, and takes compute streams with onCompute.
func (c *CUDA) compute(s *proofdata.Staged) (*cudaResident, *cudaStaged, func(), error) {
	r, ok := s.Resident.(*cudaResident)
	st, ok2 := s.Device.(*cudaStaged)
	if !ok || !ok2 || st == nil {
		return nil, nil, nil, fmt.Errorf("cuda: not staged by the CUDA backend (or freed)")
	}
	if err := c.enter(); err != nil {
		return nil, nil, nil, err
	}
	return r, st, c.exit, nil
}

// ─── NTT + MSM_H ─────────────────────────────────────────────────────────────

// computeH issues the H computation in place (result in st.a, in stream s's
// order: the next call on s reads it). The NTTs of b and c run on compute
// streams that are free now, if any, beside a's on s: the library forks
// them from s and joins them back with events, so the caller may give them
// back as soon as this returns (whatever runs on them next queues behind).
func (c *CUDA) computeH(r *cudaResident, st *cudaStaged, s uintptr) error {
	var conv int32
	switch r.key.HConvention {
	case proofdata.HDivideByZ:
		conv = 0
	case proofdata.HOddCoset:
		conv = 1
	default:
		return fmt.Errorf("ntt: unknown H convention %d", r.key.HConvention)
	}
	var side [2]uintptr
	for i := range side {
		if k := c.tryTakeCompute(); k != nil {
			defer func() { c.computes <- k }()
			side[i] = k.stream
		}
	}
	var e cerr
	err := e.err("compute h", c.fn.computeH(r.cv.id(), st.a, st.b, st.c, int32(r.logn), r.tw, r.twinv, r.gn, r.ginvn, conv, &r.zinv, s, side[0], side[1], e.p()))
	if err != nil {
		// A failure may leave b's and c's NTTs unjoined to s: wait for them here.
		for _, sd := range side {
			if sd != 0 {
				err = errors.Join(err, e.err("sync", c.fn.streamSync(sd, e.p())))
			}
		}
	}
	return err
}

// MSMH computes h on the device and its MSM against the H query. a, b and
// c are consumed.
func (c *CUDA) MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	r, st, done, err := c.compute(s)
	if err != nil {
		return nil, err
	}
	defer done()
	var h proofdata.Point
	err = c.onCompute(func(cs uintptr) error {
		// H's NTTs and its MSM in one stream's order: no wait between them.
		if err := c.computeH(r, st, cs); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// b and c are dead once h is computed: freed in the compute
		// stream's order, so that H's MSM scratch can take their room
		if err := c.freeVectors(st, cs, &st.b, &st.c); err != nil {
			return err
		}
		var err error
		if r.streamed {
			h, err = c.streamedH(ctx, r, st, cs)
		} else {
			t, _ := r.table(r.z)
			var hs []proofdata.Point
			hs, err = r.cv.msmG1(c.fn, t, "msm g1", r.z, []msmVec{{st.a, 0, r.key.HLen()}}, cs)
			if err == nil {
				h = hs[0]
			}
		}
		// the MSM has returned its sums: no kernel reads h any more
		return errors.Join(err, c.freeVectors(st, cs, &st.a))
	})
	return h, err
}

// freeVectors frees the staged vectors at ps (a, b or c of st) in stream
// s's order and zeroes them; st's later Free leaves them alone.
func (c *CUDA) freeVectors(st *cudaStaged, s uintptr, ps ...*uintptr) error {
	var err error
	var e cerr
	for _, p := range ps {
		if *p == 0 {
			continue
		}
		st.bufs = slices.DeleteFunc(st.bufs, func(b uintptr) bool { return b == *p })
		err = errors.Join(err, e.err("free", c.fn.devFree(*p, s, e.p())))
		*p = 0
	}
	return err
}

// ─── MSM ─────────────────────────────────────────────────────────────────────

// xyzz is an XYZZ point of G1 or G2 as the library returns it (a curve's
// generated types: xyzz1BN254, xyzz2BLS12381, …), and J its Jacobian form.
type xyzz[J any] interface {
	jac() J
	g2() bool // a G2 point
}

// jacobian is the group operations the window combination needs, of a
// curve's G1Jac or G2Jac.
type jacobian[J any] interface {
	*J
	DoubleAssign() *J
	AddAssign(*J) *J
}

// msmVec is one vector of scalars on the device: n values, read through
// idx (0: dense).
type msmVec struct {
	scalars, idx uintptr
	n            int
}

// msmRun is one zk_msm call: the MSMs of vecs (1 to MaxMSMBatch) against
// bases, or their table when t.ptr is set, in G1 or G2 by X, of the
// library's curve id cid, on compute stream s. It returns each vector's
// window sums, nw a vector at win[j·nw …], w bits a window (over a table:
// one sum a vector).
func msmRun[X interface{ g2() bool }](f *cudaFns, t msmTable, cid int32, op string, bases uintptr, vecs []msmVec, s uintptr) (win []X, w, nw int32, err error) {
	k := len(vecs)
	if k == 0 || k > MaxMSMBatch {
		return nil, 0, 0, fmt.Errorf("cuda %s: %d vectors, want 1 to %d", op, k, MaxMSMBatch)
	}
	scalars := make([]uintptr, k)
	idx := make([]uintptr, k)
	n := make([]uint64, k)
	for j, v := range vecs {
		scalars[j], idx[j], n[j] = v.scalars, v.idx, uint64(v.n)
	}
	var x X
	a := &zkMSMArgs{ArgsBytes: uint32(unsafe.Sizeof(zkMSMArgs{})), G2: g2Flag(x.g2()), Curve: cid, Bases: bases, K: uint32(k),
		Scalars: unsafe.Pointer(&scalars[0]), Idx: unsafe.Pointer(&idx[0]), N: unsafe.Pointer(&n[0])}
	if t.ptr != 0 {
		a.Bases, a.NBase, a.Table = t.ptr, uint64(t.nbase), 1
	}
	win = make([]X, k*maxWindows)
	var e cerr
	rc := f.msm(a, unsafe.Pointer(&win[0]), &w, &nw, s, e.p())
	runtime.KeepAlive(scalars)
	runtime.KeepAlive(idx)
	runtime.KeepAlive(n)
	if err := e.err(op, rc); err != nil {
		return nil, 0, 0, err
	}
	if nw < 0 || nw > maxWindows {
		return nil, 0, 0, fmt.Errorf("cuda %s: %d windows, at most %d", op, nw, maxWindows)
	}
	return win, w, nw, nil
}

// combine sums one vector's window sums, highest window first:
// res ← 2^w·res + win.
func combine[X xyzz[J], J any, PJ jacobian[J]](win []X, w int32) J {
	var inf X
	res := inf.jac()
	for i := len(win) - 1; i >= 0; i-- {
		p := win[i].jac()
		for range w {
			PJ(&res).DoubleAssign()
		}
		PJ(&res).AddAssign(&p)
	}
	return res
}

// msm runs one MSM of v's scalars (device, Montgomery) against bases
// (through v.idx when nonzero), or their table when t.ptr is set, in G1 or
// G2 by X, and combines its window sums. s is the caller's compute stream.
func msm[X xyzz[J], J any, PJ jacobian[J]](f *cudaFns, t msmTable, cid int32, op string, bases uintptr, v msmVec, s uintptr) (J, error) {
	var inf X
	if v.n == 0 {
		return inf.jac(), nil
	}
	win, w, nw, err := msmRun[X](f, t, cid, op, bases, []msmVec{v}, s)
	if err != nil {
		return inf.jac(), err
	}
	return combine[X, J, PJ](win[:nw], w), nil
}

// ones sums the bases whose bit is set in the device bitmap, in G1 or G2 by
// X, of the library's curve cid, on compute stream s.
func ones[X xyzz[J], J any](f onesFn, cid int32, op string, bases uintptr, q *cudaQuery, s uintptr) (J, error) {
	var p X
	var e cerr
	if err := e.err(op, f(cid, bases, q.ones, uint64(q.len), unsafe.Pointer(&p), s, e.p())); err != nil {
		var inf X
		return inf.jac(), err
	}
	return p.jac(), nil
}

// ─── batch-addition ──────────────────────────────────────────────────────────

// BatchAddG1 sums, per G1 query, the bases whose scalar is one (bitmap on the device).
func (c *CUDA) BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	var out proofdata.G1Sums
	r, st, done, err := c.compute(s)
	if err != nil {
		return out, err
	}
	defer done()
	if r.streamed {
		err = c.onCompute(func(cs uintptr) error { out, err = c.streamedG1(ctx, r, st, cs); return err })
		if err != nil {
			return out, err
		}
		return out, ctx.Err()
	}
	// Three short launches: one stream, in turn.
	err = c.onCompute(func(cs uintptr) error {
		for i, t := range []struct {
			dst   *proofdata.Point
			bases uintptr
		}{{&out.A, r.a}, {&out.B1, r.b1}, {&out.K, r.k}} {
			p, err := r.cv.onesG1(c.fn, t.bases, &st.q[i], cs)
			if err != nil {
				return err
			}
			*t.dst = p
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	return out, ctx.Err()
}

// BatchAddG2 sums the B query's G2 bases whose scalar is one.
func (c *CUDA) BatchAddG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	r, st, done, err := c.compute(s)
	if err != nil {
		return nil, err
	}
	defer done()
	var p proofdata.Point
	err = c.onCompute(func(cs uintptr) (err error) {
		if r.streamed {
			p, st.tailB2, err = c.streamedQuery(ctx, r, cs, r.host[4], r.key.Size.B2, true, &st.q[1])
			return err
		}
		p, err = r.cv.onesG2(c.fn, r.b2, &st.q[1], cs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, ctx.Err()
}

// ─── tail-MSM ────────────────────────────────────────────────────────────────

// TailMSMG1 runs the MSMs of the significant scalars of A, B₁ and K; the
// bases of a sparse query are read through its indexes on the device (see
// tails, and TailMSMG1Batch for several jobs at once).
func (c *CUDA) TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	r, st, done, err := c.compute(s)
	if err != nil {
		return proofdata.G1Sums{}, err
	}
	defer done()
	out, err := c.tails(ctx, r, []*cudaStaged{st})
	return out[0], err
}

// ─── B_G2 ────────────────────────────────────────────────────────────────────

// MSMG2 runs the G2 MSM of the B query's significant scalars on the device.
func (c *CUDA) MSMG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	r, st, done, err := c.compute(s)
	if err != nil {
		return nil, err
	}
	defer done()
	q := &st.q[1]
	if r.streamed {
		if st.tailB2 == nil {
			return nil, fmt.Errorf("cuda: B₂'s tail of streamed bases runs in batch-addition (BatchAddG2), which has not run")
		}
		return st.tailB2, ctx.Err()
	}
	var res proofdata.Point
	err = c.onCompute(func(cs uintptr) (err error) {
		t, _ := r.table(r.b2)
		res, err = r.cv.msmG2(c.fn, t, "msm g2", r.b2, msmVec{q.vals, q.idx, q.nvals}, cs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, ctx.Err()
}
