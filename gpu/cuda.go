package gpu

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/ebitengine/purego"
)

// CUDA is the GPU backend: the kernels of gpu/cuda (libzkpipe_cuda.so, built
// with nvcc) loaded at run time with purego, so that Go builds need no cgo.
//
// Keys are uploaded once per circuit by Load and stay resident on the device.
// Per-proof vectors go to the device through pinned bounce buffers taken
// once at start-up (OpenCUDA), never pinned per proof: several transfer lanes
// (two buffers and a stream each) copy at once. Device memory for a proof
// comes from CUDA's stream-ordered pool, which keeps freed memory for the
// next proof. Kernels run on their own stream under a lock, so one job's
// upload overlaps another's MSMs; every method is safe for concurrent use by
// stage workers.
type CUDA struct {
	fn       cudaFns
	device   string
	memTotal uint64

	pinBytes int
	lanes    chan *cudaLane // transfer lanes, each taken by one upload at a time
	all      []*cudaLane

	xfer   uintptr    // allocations and zero-fills of transfers
	compMu sync.Mutex // the compute stream
	comp   uintptr
}

// cudaLane is one concurrent upload path: two pinned bounce buffers (the CPU
// fills one while the other is copied) and a stream. Several lanes copy at
// once, so the CPU side of a transfer (memcpy into pinned memory) runs on
// several cores.
type cudaLane struct {
	pin    [2]unsafe.Pointer
	stream uintptr
}

// cudaFns are the C entry points of libzkpipe_cuda.so (see gpu/cuda/zkpipe.cu).
type cudaFns struct {
	errorf       func(buf *byte, n int32) int32
	init         func(dev int32, name *byte, n int32, mem *uint64) int32
	hostAlloc    func(p *unsafe.Pointer, bytes uint64) int32
	hostFree     func(p unsafe.Pointer) int32
	streamCreate func(s *uintptr) int32
	streamSync   func(s uintptr) int32
	devAlloc     func(p *uintptr, bytes uint64, s uintptr) int32
	devFree      func(p uintptr, s uintptr) int32
	memset       func(p uintptr, bytes uint64, s uintptr) int32
	upload       func(dst uintptr, src unsafe.Pointer, bytes uint64, pin0, pin1 unsafe.Pointer, pinBytes uint64, s uintptr) int32
	download     func(dst unsafe.Pointer, src uintptr, bytes uint64, s uintptr) int32
	domainTables func(tw, twinv, gn, ginvn uintptr, logn int32, consts *fr.Element, s uintptr) int32
	computeH     func(a, b, c uintptr, logn int32, tw, twinv, gn, ginvn uintptr, conv int32, zinv *fr.Element, s uintptr) int32
	benchNTT     func(x uintptr, logn int32, tw uintptr, reps int32, ms *float32, s uintptr) int32
	msmG1        func(bases, scalars, idx uintptr, n uint64, out unsafe.Pointer, c, nw *int32, s uintptr) int32
	msmG2        func(bases, scalars, idx uintptr, n uint64, out unsafe.Pointer, c, nw *int32, s uintptr) int32
	onesG1       func(bases, bitmap uintptr, n uint64, out unsafe.Pointer, s uintptr) int32
	onesG2       func(bases, bitmap uintptr, n uint64, out unsafe.Pointer, s uintptr) int32
}

// CUDAOption configures OpenCUDA.
type CUDAOption func(*cudaConfig)

type cudaConfig struct {
	device   int
	pinBytes int
	lanes    int
}

// WithCUDADevice picks the GPU (default 0).
func WithCUDADevice(i int) CUDAOption { return func(c *cudaConfig) { c.device = i } }

// WithPinnedBytes sets the size of each pinned bounce buffer (default
// 32 MiB; two per lane); the total counts against the pinned budget.
func WithPinnedBytes(n int) CUDAOption { return func(c *cudaConfig) { c.pinBytes = n } }

// WithTransferLanes sets how many uploads run at once (default 4).
func WithTransferLanes(n int) CUDAOption { return func(c *cudaConfig) { c.lanes = n } }

// ErrNoCUDA wraps every reason OpenCUDA cannot give a backend.
var ErrNoCUDA = errors.New("cuda unavailable")

// OpenCUDA loads libzkpipe_cuda.so from libPath, opens the GPU and takes the
// pinned buffers. A missing library or GPU is an error wrapping ErrNoCUDA.
func OpenCUDA(libPath string, opts ...CUDAOption) (*CUDA, error) {
	cfg := cudaConfig{pinBytes: 32 << 20, lanes: 4}
	for _, o := range opts {
		o(&cfg)
	}
	if libPath == "" {
		return nil, fmt.Errorf("%w: no library path (build gpu/cuda with build.sh)", ErrNoCUDA)
	}
	if _, err := os.Stat(libPath); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCUDA, err)
	}
	lib, err := purego.Dlopen(libPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: load %s: %v", ErrNoCUDA, libPath, err)
	}
	if cfg.pinBytes < 1<<20 || cfg.lanes < 1 {
		return nil, fmt.Errorf("cuda: %d pinned bytes a buffer and %d lanes: want ≥ 1 MiB and ≥ 1", cfg.pinBytes, cfg.lanes)
	}
	c := &CUDA{pinBytes: cfg.pinBytes, lanes: make(chan *cudaLane, cfg.lanes)}
	f := &c.fn
	for _, s := range []struct {
		name string
		ptr  any
	}{
		{"zk_error", &f.errorf}, {"zk_init", &f.init}, {"zk_host_alloc", &f.hostAlloc}, {"zk_host_free", &f.hostFree},
		{"zk_stream_create", &f.streamCreate}, {"zk_stream_sync", &f.streamSync},
		{"zk_dev_alloc", &f.devAlloc}, {"zk_dev_free", &f.devFree}, {"zk_memset", &f.memset},
		{"zk_upload", &f.upload}, {"zk_download", &f.download},
		{"zk_domain_tables", &f.domainTables}, {"zk_compute_h", &f.computeH}, {"zk_bench_ntt", &f.benchNTT},
		{"zk_msm_g1", &f.msmG1}, {"zk_msm_g2", &f.msmG2}, {"zk_ones_g1", &f.onesG1}, {"zk_ones_g2", &f.onesG2},
	} {
		sym, err := purego.Dlsym(lib, s.name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoCUDA, libPath, err)
		}
		purego.RegisterFunc(s.ptr, sym)
	}
	name := make([]byte, 256)
	if err := c.check("init", f.init(int32(cfg.device), &name[0], int32(len(name)), &c.memTotal)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCUDA, err)
	}
	c.device = cString(name)
	for _, s := range []*uintptr{&c.xfer, &c.comp} {
		if err := c.check("stream", f.streamCreate(s)); err != nil {
			return nil, err
		}
	}
	for range cfg.lanes {
		l := &cudaLane{}
		c.all = append(c.all, l)
		if err := c.check("stream", f.streamCreate(&l.stream)); err != nil {
			c.Close()
			return nil, err
		}
		for i := range l.pin {
			if err := c.check("pinned alloc", f.hostAlloc(&l.pin[i], uint64(c.pinBytes))); err != nil {
				c.Close()
				return nil, err
			}
		}
		c.lanes <- l
	}
	return c, nil
}

func cString(b []byte) string {
	for i, x := range b {
		if x == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// check turns a C status into an error carrying the library's message.
func (c *CUDA) check(op string, rc int32) error {
	if rc == 0 {
		return nil
	}
	buf := make([]byte, 512)
	c.fn.errorf(&buf[0], int32(len(buf)))
	return fmt.Errorf("cuda %s: %s (code %d)", op, cString(buf), rc)
}

func (c *CUDA) Name() string { return "cuda" }

// Device describes the GPU: name, compute capability, multiprocessors.
func (c *CUDA) Device() string { return c.device }

// PinnedBytes is the pinned host memory this backend holds.
func (c *CUDA) PinnedBytes() int { return 2 * len(c.all) * c.pinBytes }

// Close gives back the pinned buffers, waiting for uploads in flight.
// Residents must be closed first.
func (c *CUDA) Close() error {
	var err error
	for _, l := range c.all {
		for i, p := range l.pin {
			if p != nil {
				err = errors.Join(err, c.check("pinned free", c.fn.hostFree(p)))
				l.pin[i] = nil
			}
		}
	}
	c.all = nil
	return err
}

// alloc takes n bytes of device memory on stream s.
func (c *CUDA) alloc(n int, s uintptr) (uintptr, error) {
	var p uintptr
	if err := c.check("alloc", c.fn.devAlloc(&p, uint64(n), s)); err != nil {
		return 0, err
	}
	return p, nil
}

// hostBuf is host memory to stage on the device: n bytes at src, in a
// device buffer of total bytes whose tail is zero-filled.
type hostBuf struct {
	src      unsafe.Pointer
	n, total int
}

func bufOf[T any](x []T, total int) hostBuf {
	var zero T
	size := int(unsafe.Sizeof(zero))
	b := hostBuf{n: len(x) * size, total: total * size}
	if len(x) > 0 {
		b.src = unsafe.Pointer(&x[0])
	}
	return b
}

// stage allocates a device buffer for each host buffer, zero-fills the
// tails and uploads the contents, pieces of each spread over the lanes.
// On error nothing stays allocated.
func (c *CUDA) stage(bufs []hostBuf) ([]uintptr, error) {
	out := make([]uintptr, len(bufs))
	free := func() {
		for _, p := range out {
			if p != 0 {
				c.fn.devFree(p, c.xfer)
			}
		}
	}
	for i, b := range bufs {
		p, err := c.alloc(b.total, c.xfer)
		if err != nil {
			free()
			return nil, err
		}
		out[i] = p
		if b.total > b.n {
			if err := c.check("memset", c.fn.memset(p+uintptr(b.n), uint64(b.total-b.n), c.xfer)); err != nil {
				free()
				return nil, err
			}
		}
	}
	// The lanes' streams use the buffers once their allocation is done.
	if err := c.check("sync", c.fn.streamSync(c.xfer)); err != nil {
		free()
		return nil, err
	}
	piece := 4 * c.pinBytes
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i, b := range bufs {
		for off := 0; off < b.n; off += piece {
			n := min(piece, b.n-off)
			dst, src := out[i]+uintptr(off), unsafe.Add(b.src, off)
			l := <-c.lanes
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := c.check("upload", c.fn.upload(dst, src, uint64(n), l.pin[0], l.pin[1], uint64(c.pinBytes), l.stream))
				c.lanes <- l
				if err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	runtime.KeepAlive(bufs)
	if first != nil {
		free()
		return nil, first
	}
	return out, nil
}

// ─── Load ────────────────────────────────────────────────────────────────────

type cudaResident struct {
	c   *CUDA
	key *Key

	a, b1, k, z, b2      uintptr // bases
	tw, twinv, gn, ginvn uintptr // NTT tables
	logn                 int
	zinv                 fr.Element
	closeOnce            sync.Once
}

func (r *cudaResident) Key() *Key { return r.key }

// Close frees the device copy of the key.
func (r *cudaResident) Close() error {
	var err error
	r.closeOnce.Do(func() {
		r.c.compMu.Lock()
		defer r.c.compMu.Unlock()
		for _, p := range []uintptr{r.a, r.b1, r.k, r.z, r.b2, r.tw, r.twinv, r.gn, r.ginvn} {
			if p != 0 {
				err = errors.Join(err, r.c.check("free", r.c.fn.devFree(p, r.c.comp)))
			}
		}
		err = errors.Join(err, r.c.check("sync", r.c.fn.streamSync(r.c.comp)))
	})
	return err
}

// Load uploads the key's bases and builds the NTT tables on the device.
func (c *CUDA) Load(k *Key) (Resident, error) {
	if k.Domain == nil {
		return nil, fmt.Errorf("cuda: key has no domain")
	}
	n := k.N()
	if n&(n-1) != 0 || n == 0 || n > 1<<30 {
		return nil, fmt.Errorf("cuda: domain of %d is not a power of two ≤ 2^30", n)
	}
	r := &cudaResident{c: c, key: k, logn: bits.TrailingZeros(uint(n))}
	err := func() error {
		p, err := c.stage([]hostBuf{bufOf(k.A, len(k.A)), bufOf(k.B1, len(k.B1)), bufOf(k.K, len(k.K)), bufOf(k.Z, len(k.Z)), bufOf(k.B2, len(k.B2))})
		if err != nil {
			return err
		}
		r.a, r.b1, r.k, r.z, r.b2 = p[0], p[1], p[2], p[3], p[4]
		for _, t := range []struct {
			p *uintptr
			n int
		}{{&r.tw, max(n/2, 1)}, {&r.twinv, max(n/2, 1)}, {&r.gn, n}, {&r.ginvn, n}} {
			if *t.p, err = c.alloc(t.n*fr.Bytes, c.xfer); err != nil {
				return err
			}
		}
		d := k.Domain
		var consts [6]fr.Element
		consts[0], consts[1] = d.Generator, d.GeneratorInv
		consts[2], consts[3] = d.FrMultiplicativeGen, d.FrMultiplicativeGenInv
		consts[4] = d.CardinalityInv
		consts[5].SetOne()
		return c.check("domain", c.fn.domainTables(r.tw, r.twinv, r.gn, r.ginvn, int32(r.logn), &consts[0], c.xfer))
	}()
	if err != nil {
		r.Close()
		return nil, err
	}
	// 1/Z on the coset: Z(g·ω^i) = gⁿ − 1 for every i.
	var one fr.Element
	one.SetOne()
	r.zinv.Exp(k.Domain.FrMultiplicativeGen, big.NewInt(int64(n)))
	r.zinv.Sub(&r.zinv, &one).Inverse(&r.zinv)
	return r, nil
}

// ─── Transfer ────────────────────────────────────────────────────────────────

type cudaQuery struct {
	len, nvals int
	ones       uintptr // bitmap, (len+63)/64 words
	idx        uintptr // 0 when dense
	vals       uintptr
}

type cudaStaged struct {
	a, b, c uintptr // n elements each, zero-padded
	q       [3]cudaQuery
	bufs    []uintptr
}

// Transfer uploads one proof's vectors (a, b, c padded to n with zeros, and
// the classified queries) through the pinned buffers.
func (c *CUDA) Transfer(ctx context.Context, res Resident, v *Vectors) (*Staged, error) {
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
		q    *Query
		nb   int
	}{{"A", &v.QA, len(k.A)}, {"B", &v.QB, len(k.B1)}, {"K", &v.QK, len(k.K)}} {
		if err := checkQuery(q.name, q.q, q.nb); err != nil {
			return nil, err
		}
	}
	// a, b, c padded to n; per query: ones bitmap, values, indexes (sparse)
	bufs := []hostBuf{bufOf(v.A, n), bufOf(v.B, n), bufOf(v.C, n)}
	for _, q := range []*Query{&v.QA, &v.QB, &v.QK} {
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
	for i, q := range []*Query{&v.QA, &v.QB, &v.QK} {
		dq := &st.q[i]
		dq.len, dq.nvals = q.Len, len(q.Vals)
		dq.ones, dq.vals = p[next], p[next+1]
		next += 2
		if !q.Dense {
			dq.idx = p[next]
			next++
		}
	}
	s := &Staged{Resident: res, Host: v, Device: st}
	if err := ctx.Err(); err != nil {
		c.Free(s)
		return nil, err
	}
	return s, nil
}

// Free releases the device memory Transfer took (back to the pool).
func (c *CUDA) Free(s *Staged) {
	st, ok := s.Device.(*cudaStaged)
	if !ok || st == nil {
		return
	}
	c.compMu.Lock()
	defer c.compMu.Unlock()
	for _, p := range st.bufs {
		c.fn.devFree(p, c.comp)
	}
	st.bufs = nil
	s.Device = nil
}

func staged(s *Staged) (*cudaResident, *cudaStaged, error) {
	r, ok := s.Resident.(*cudaResident)
	st, ok2 := s.Device.(*cudaStaged)
	if !ok || !ok2 || st == nil {
		return nil, nil, fmt.Errorf("cuda: not staged by the CUDA backend (or freed)")
	}
	return r, st, nil
}

// ─── NTT + MSM_H ─────────────────────────────────────────────────────────────

// computeH runs the H computation in place (result in st.a). Caller holds compMu.
func (c *CUDA) computeH(r *cudaResident, st *cudaStaged) error {
	var conv int32
	switch r.key.HConvention {
	case HDivideByZ:
		conv = 0
	case HOddCoset:
		conv = 1
	default:
		return fmt.Errorf("ntt: unknown H convention %d", r.key.HConvention)
	}
	return c.check("compute h", c.fn.computeH(st.a, st.b, st.c, int32(r.logn), r.tw, r.twinv, r.gn, r.ginvn, conv, &r.zinv, c.comp))
}

// MSMH computes h on the device and its MSM against the H query. a, b and
// c are consumed.
func (c *CUDA) MSMH(ctx context.Context, s *Staged) (bn254.G1Jac, error) {
	var res bn254.G1Jac
	r, st, err := staged(s)
	if err != nil {
		return res, err
	}
	c.compMu.Lock()
	defer c.compMu.Unlock()
	if err := c.computeH(r, st); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return c.msmG1(r.z, st.a, 0, r.key.HLen())
}

// ComputeH returns h as MSMH computes it (n terms, by the key's convention),
// for tests against the CPU backend. a, b and c are consumed.
func (c *CUDA) ComputeH(ctx context.Context, s *Staged) ([]fr.Element, error) {
	r, st, err := staged(s)
	if err != nil {
		return nil, err
	}
	c.compMu.Lock()
	defer c.compMu.Unlock()
	if err := c.computeH(r, st); err != nil {
		return nil, err
	}
	h := make([]fr.Element, r.key.N())
	return h, c.check("download", c.fn.download(unsafe.Pointer(&h[0]), st.a, uint64(len(h)*fr.Bytes), c.comp))
}

// TimeNTT uploads x (length n of r's domain) and returns the mean device
// time of one forward NTT over reps runs (CUDA events).
func (c *CUDA) TimeNTT(res Resident, x []fr.Element, reps int) (time.Duration, error) {
	r, ok := res.(*cudaResident)
	if !ok || len(x) != r.key.N() {
		return 0, fmt.Errorf("cuda: TimeNTT wants a CUDA resident and n elements")
	}
	ps, err := c.stage([]hostBuf{bufOf(x, len(x))})
	if err != nil {
		return 0, err
	}
	p := ps[0]
	c.compMu.Lock()
	defer c.compMu.Unlock()
	defer c.fn.devFree(p, c.comp)
	var ms float32
	if err := c.check("bench ntt", c.fn.benchNTT(p, int32(r.logn), r.tw, int32(reps), &ms, c.comp)); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// ─── MSM ─────────────────────────────────────────────────────────────────────

const maxWindows = 64 // window size ≥ 4 bits: at most ⌈255/4⌉ windows

type xyzzG1 struct{ X, Y, ZZ, ZZZ fp.Element }
type xyzzG2 struct{ X, Y, ZZ, ZZZ bn254.E2 }

// jac converts XYZZ (x = X/ZZ, y = Y/ZZZ) to Jacobian without an inversion:
// Z' = ZZ·ZZZ, X' = X·ZZ·ZZZ², Y' = Y·ZZ³·ZZZ².
func (p *xyzzG1) jac() bn254.G1Jac {
	var r bn254.G1Jac
	if p.ZZ.IsZero() {
		r.X.SetOne()
		r.Y.SetOne()
		return r
	}
	var zzz2, zz2 fp.Element
	zzz2.Square(&p.ZZZ)
	zz2.Square(&p.ZZ)
	r.Z.Mul(&p.ZZ, &p.ZZZ)
	r.X.Mul(&p.X, &p.ZZ).Mul(&r.X, &zzz2)
	r.Y.Mul(&p.Y, &zz2).Mul(&r.Y, &p.ZZ).Mul(&r.Y, &zzz2)
	return r
}

func (p *xyzzG2) jac() bn254.G2Jac {
	var r bn254.G2Jac
	if p.ZZ.IsZero() {
		r.X.SetOne()
		r.Y.SetOne()
		return r
	}
	var zzz2, zz2 bn254.E2
	zzz2.Square(&p.ZZZ)
	zz2.Square(&p.ZZ)
	r.Z.Mul(&p.ZZ, &p.ZZZ)
	r.X.Mul(&p.X, &p.ZZ).Mul(&r.X, &zzz2)
	r.Y.Mul(&p.Y, &zz2).Mul(&r.Y, &p.ZZ).Mul(&r.Y, &zzz2)
	return r
}

// horner is one step of combining an MSM's window sums, highest window
// first: res ← 2^w·res + win, in G1 or G2.
func horner[J any, P interface {
	*J
	DoubleAssign() *J
	AddAssign(*J) *J
}](res P, w int, win *J) {
	for range w {
		res.DoubleAssign()
	}
	res.AddAssign(win)
}

// msmG1 runs one G1 MSM of n scalars (device, Montgomery) against bases
// (through idx when nonzero) and combines its windows. Caller holds compMu.
func (c *CUDA) msmG1(bases, scalars, idx uintptr, n int) (bn254.G1Jac, error) {
	var res bn254.G1Jac
	res.X.SetOne()
	res.Y.SetOne()
	if n == 0 {
		return res, nil
	}
	var win [maxWindows]xyzzG1
	var w, nw int32
	if err := c.check("msm g1", c.fn.msmG1(bases, scalars, idx, uint64(n), unsafe.Pointer(&win[0]), &w, &nw, c.comp)); err != nil {
		return res, err
	}
	for i := int(nw) - 1; i >= 0; i-- {
		p := win[i].jac()
		horner(&res, int(w), &p)
	}
	return res, nil
}

func (c *CUDA) msmG2(bases, scalars, idx uintptr, n int) (bn254.G2Jac, error) {
	var res bn254.G2Jac
	res.X.SetOne()
	res.Y.SetOne()
	if n == 0 {
		return res, nil
	}
	var win [maxWindows]xyzzG2
	var w, nw int32
	if err := c.check("msm g2", c.fn.msmG2(bases, scalars, idx, uint64(n), unsafe.Pointer(&win[0]), &w, &nw, c.comp)); err != nil {
		return res, err
	}
	for i := int(nw) - 1; i >= 0; i-- {
		p := win[i].jac()
		horner(&res, int(w), &p)
	}
	return res, nil
}

// ─── batch-addition ──────────────────────────────────────────────────────────

// BatchAddG1 sums, per G1 query, the bases whose scalar is one (bitmap on the device).
func (c *CUDA) BatchAddG1(ctx context.Context, s *Staged) (G1Sums, error) {
	var out G1Sums
	r, st, err := staged(s)
	if err != nil {
		return out, err
	}
	c.compMu.Lock()
	defer c.compMu.Unlock()
	for i, t := range []struct {
		dst   *bn254.G1Jac
		bases uintptr
	}{{&out.A, r.a}, {&out.B1, r.b1}, {&out.K, r.k}} {
		var p xyzzG1
		q := &st.q[i]
		if err := c.check("ones g1", c.fn.onesG1(t.bases, q.ones, uint64(q.len), unsafe.Pointer(&p), c.comp)); err != nil {
			return out, err
		}
		*t.dst = p.jac()
	}
	return out, ctx.Err()
}

// BatchAddG2 sums the B query's G2 bases whose scalar is one.
func (c *CUDA) BatchAddG2(ctx context.Context, s *Staged) (bn254.G2Jac, error) {
	r, st, err := staged(s)
	if err != nil {
		return bn254.G2Jac{}, err
	}
	c.compMu.Lock()
	defer c.compMu.Unlock()
	var p xyzzG2
	q := &st.q[1]
	if err := c.check("ones g2", c.fn.onesG2(r.b2, q.ones, uint64(q.len), unsafe.Pointer(&p), c.comp)); err != nil {
		return bn254.G2Jac{}, err
	}
	return p.jac(), ctx.Err()
}

// ─── tail-MSM ────────────────────────────────────────────────────────────────

// TailMSMG1 runs the MSMs of the significant scalars of A, B₁ and K; the
// bases of a sparse query are read through its indexes on the device.
func (c *CUDA) TailMSMG1(ctx context.Context, s *Staged) (G1Sums, error) {
	var out G1Sums
	r, st, err := staged(s)
	if err != nil {
		return out, err
	}
	c.compMu.Lock()
	defer c.compMu.Unlock()
	for i, t := range []struct {
		name  string
		dst   *bn254.G1Jac
		bases uintptr
	}{{"A", &out.A, r.a}, {"B", &out.B1, r.b1}, {"K", &out.K, r.k}} {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		q := &st.q[i]
		if *t.dst, err = c.msmG1(t.bases, q.vals, q.idx, q.nvals); err != nil {
			return out, fmt.Errorf("tail msm %s: %w", t.name, err)
		}
	}
	return out, nil
}

// ─── B_G2 ────────────────────────────────────────────────────────────────────

// MSMG2 runs the G2 MSM of the B query's significant scalars on the device.
func (c *CUDA) MSMG2(ctx context.Context, s *Staged) (bn254.G2Jac, error) {
	r, st, err := staged(s)
	if err != nil {
		return bn254.G2Jac{}, err
	}
	c.compMu.Lock()
	defer c.compMu.Unlock()
	q := &st.q[1]
	res, err := c.msmG2(r.b2, q.vals, q.idx, q.nvals)
	if err != nil {
		return res, err
	}
	return res, ctx.Err()
}
