package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// CUDA is the GPU backend: the kernels of gpu/cuda (libzkpipe_cuda.so, built
// with nvcc) loaded at run time with purego, so that Go builds need no cgo.
//
// Keys are uploaded once per circuit by Load and stay resident on the device.
// Per-proof vectors go to the device through pinned bounce buffers taken
// once at start-up (OpenCUDA), never pinned per proof: several transfer lanes
// (two buffers and a stream each) copy at once. Device memory for a proof
// comes from CUDA's stream-ordered pool, which keeps freed memory for the
// next proof. Kernels run on a few compute streams (WithComputeStreams,
// default 2), each serving one operation at a time with its own scratch
// (allocated on that stream from the pool), so one job's upload, another's
// H and a third's tail MSMs run at once; the tail MSMs of one job (A, B₁,
// K) take a stream each. Every method is safe for concurrent use by stage
// workers.
//
// Lifecycle: Close waits for the uploads and kernels in flight, takes every
// lane and compute stream back, frees what residents and staged jobs still
// hold on the device, then the pinned buffers and the streams. A process
// may open, use and close backends many times; the library itself is
// loaded once.
type CUDA struct {
	lib      *cudaLib
	fn       *cudaFns
	index    int32   // the device's number, given to every call that names one
	ctx      uintptr // the library's context (zk_init): the device and cfg
	cfg      CUDAConfig
	device   string
	memTotal uint64

	pinBytes        int
	classifyWorkers int            // goroutines classifying one job's queries (WithClassifyWorkers; 0: GOMAXPROCS)
	tableBudget     int64          // device bytes one key's MSM tables may take (cuda_table.go)
	tableMin        int            // the fewest bases a set needs for a table
	basesPlace      BasesPlace     // where keys' bases live (cuda_streamed.go)
	streamPiece     int            // points of one streamed piece
	fixedBaseWindow int32          // zk_fixed_base's window bits (0: the library's choice by size; tests set others)
	lanes           chan *cudaLane // transfer lanes, each taken by one upload at a time
	all             []*cudaLane
	done            chan struct{} // closed by Close: no lane or compute stream is handed out after it

	xfer      uintptr           // allocations, zero-fills and frees of staged and resident buffers
	computes  chan *cudaCompute // compute streams, each taken by one operation at a time
	allComp   []*cudaCompute
	tailSplit bool // one job's tail MSMs run on several compute streams at once

	opMu    sync.Mutex // operations in flight, which Close waits for
	opDone  *sync.Cond
	ops     int
	closing bool

	liveMu    sync.Mutex
	residents map[*cudaResident]struct{} // loaded, not closed
	staged    map[*cudaStaged]struct{}   // transferred, not freed
	closeOnce sync.Once
	closeErr  error
}

// cudaLane is one concurrent upload path: two pinned bounce buffers (the CPU
// fills one while the other is copied) and a stream. Several lanes copy at
// once, so the CPU side of a transfer (memcpy into pinned memory) runs on
// several cores.
type cudaLane struct {
	pin    [2]unsafe.Pointer
	stream uintptr
}

// cudaCompute is one compute stream. An operation (an MSM, a batch-
// addition, H) takes one, issues its kernels there and waits for them
// before handing it back; its scratch comes from the pool in that stream's
// order, so operations on different streams share no scratch and run at once.
type cudaCompute struct {
	stream uintptr
}

// CUDAOption configures OpenCUDA.
type CUDAOption func(*cudaConfig)

type cudaConfig struct {
	lib         CUDAConfig
	device      int
	pinBytes    int
	lanes       int
	streams     int
	tailSplit   bool
	tableBytes  int64
	tableMin    int
	classify    int
	bases       BasesPlace
	streamPiece int
}

// MaxComputeStreams bounds WithComputeStreams: past a few, streams only add
// scratch memory (each MSM fills most of the GPU).
const MaxComputeStreams = 16

// WithCUDADevice picks the GPU (default 0).
func WithCUDADevice(i int) CUDAOption { return func(c *cudaConfig) { c.device = i } }

// WithPinnedBytes sets the size of each pinned bounce buffer (default
// 32 MiB; two per lane); the total counts against the pinned budget.
func WithPinnedBytes(n int) CUDAOption { return func(c *cudaConfig) { c.pinBytes = n } }

// WithTransferLanes sets how many uploads run at once (default 4).
func WithTransferLanes(n int) CUDAOption { return func(c *cudaConfig) { c.lanes = n } }

// WithComputeStreams sets how many device operations run at once (default
// 2, at most MaxComputeStreams): each takes a compute stream of its own.
// One serialises them all, as before streams.
func WithComputeStreams(n int) CUDAOption { return func(c *cudaConfig) { c.streams = n } }

// WithTailSplit says whether one job's tail MSMs (A, B₁, K) may run on
// several compute streams at once (default on; off is
// CUDAConfig.SerialTails, for A/B measurements). Each running MSM holds its
// scratch, so JobBytes grows by the MSMs that overlap.
func WithTailSplit(on bool) CUDAOption {
	return func(c *cudaConfig) {
		c.tailSplit = on
		c.lib.SerialTails = !on
	}
}

// WithClassifyWorkers bounds the goroutines that classify one job's
// queries in TransferClassify, shared out among its queries (default 0:
// GOMAXPROCS when the job starts). A query's pinned chunk is split among
// its share in parts of at least proofdata.MinClassifyPart scalars, so a
// small job stays on one goroutine a query; 1 classifies each query on one.
func WithClassifyWorkers(n int) CUDAOption { return func(c *cudaConfig) { c.classify = n } }

// ErrClosed is the error of an operation on a closed CUDA backend.
var ErrClosed = errors.New("cuda: backend closed")

// OpenCUDA loads the library that FindCUDALibrary(lib) names (lib is the
// --cuda-lib flag, or ""), checks its ABI, opens the GPU with the backend's
// CUDAConfig (WithConfig) and takes the pinned buffers. A missing, stale or
// foreign library and a missing GPU are errors wrapping ErrNoCUDA; a
// CUDAConfig out of range is an error naming the field.
func OpenCUDA(lib string, opts ...CUDAOption) (*CUDA, error) {
	cfg := newCUDAConfig(opts)
	if err := cfg.lib.check(); err != nil {
		return nil, err
	}
	if cfg.pinBytes < 1<<20 || cfg.lanes < 1 {
		return nil, fmt.Errorf("cuda: %d pinned bytes a buffer and %d lanes: want ≥ 1 MiB and ≥ 1", cfg.pinBytes, cfg.lanes)
	}
	if cfg.classify < 0 {
		return nil, fmt.Errorf("cuda: %d classify workers: want ≥ 1, or 0 for GOMAXPROCS", cfg.classify)
	}
	if p := cfg.streamPiece; p < 64 || p&(p-1) != 0 {
		return nil, fmt.Errorf("cuda: streamed pieces of %d points: want a power of two of at least 64", p)
	}
	if cfg.streams < 1 || cfg.streams > MaxComputeStreams {
		return nil, fmt.Errorf("cuda: %d compute streams: want 1 to %d", cfg.streams, MaxComputeStreams)
	}
	path, err := FindCUDALibrary(lib)
	if err != nil {
		return nil, err
	}
	l, err := loadCUDALibrary(path, cfg.lib.LibraryPath)
	if err != nil {
		return nil, err
	}
	c := &CUDA{lib: l, fn: &l.fn, cfg: cfg.lib, pinBytes: cfg.pinBytes, classifyWorkers: cfg.classify, tableBudget: cfg.tableBytes, tableMin: cfg.tableMin,
		basesPlace: cfg.bases, streamPiece: cfg.streamPiece, lanes: make(chan *cudaLane, cfg.lanes),
		computes: make(chan *cudaCompute, cfg.streams), tailSplit: cfg.tailSplit,
		done: make(chan struct{}), residents: map[*cudaResident]struct{}{}, staged: map[*cudaStaged]struct{}{}}
	c.opDone = sync.NewCond(&c.opMu)
	c.index = int32(cfg.device)
	f := c.fn
	name := make([]byte, 256)
	var e cerr
	zc := cfg.lib.zk(f)
	if err := e.err("init", f.init(int32(cfg.device), &zc, &c.ctx, &name[0], int32(len(name)), &c.memTotal, e.p())); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoCUDA, path, err)
	}
	c.device = cString(name)
	if err := e.err("stream", f.streamCreate(c.ctx, &c.xfer, e.p())); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	for range cfg.streams {
		k := &cudaCompute{}
		c.allComp = append(c.allComp, k)
		c.computes <- k // Close takes it back
		if err := e.err("stream", f.streamCreate(c.ctx, &k.stream, e.p())); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	for range cfg.lanes {
		l := &cudaLane{}
		c.all = append(c.all, l)
		c.lanes <- l // Close takes it back
		if err := e.err("stream", f.streamCreate(c.ctx, &l.stream, e.p())); err != nil {
			return nil, errors.Join(err, c.Close())
		}
		for i := range l.pin {
			if err := e.err("pinned alloc", f.hostAlloc(&l.pin[i], uint64(c.pinBytes), e.p())); err != nil {
				return nil, errors.Join(err, c.Close())
			}
		}
	}
	return c, nil
}

func (c *CUDA) Name() string { return "cuda" }

// newCUDAConfig is the defaults with opts applied.
func newCUDAConfig(opts []CUDAOption) cudaConfig {
	cfg := cudaConfig{pinBytes: 32 << 20, lanes: 4, streams: 2, tailSplit: true,
		tableBytes: DefaultMSMTableBytes, tableMin: DefaultMSMTableMinBases, streamPiece: DefaultStreamPiece}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// CUDADevices is how many GPUs the library at lib (as OpenCUDA finds it,
// with the same options) can drive.
func CUDADevices(lib string, opts ...CUDAOption) (int, error) {
	path, err := FindCUDALibrary(lib)
	if err != nil {
		return 0, err
	}
	l, err := loadCUDALibrary(path, newCUDAConfig(opts).lib.LibraryPath)
	if err != nil {
		return 0, err
	}
	var n int32
	var e cerr
	if err := e.err("device count", l.fn.deviceCount(&n, e.p())); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrNoCUDA, path, err)
	}
	return int(n), nil
}

// Index is the device's number.
func (c *CUDA) Index() int { return int(c.index) }

// Device describes the GPU: name, compute capability, multiprocessors.
func (c *CUDA) Device() string { return c.device }

// Library is the path the library was loaded from (a bare name: found on
// the system library path).
func (c *CUDA) Library() string { return c.lib.path }

// ComputeStreams is how many device operations run at once.
func (c *CUDA) ComputeStreams() int { return len(c.allComp) }

// PinnedBytes is the pinned host memory this backend holds.
func (c *CUDA) PinnedBytes() int { return 2 * len(c.all) * c.pinBytes }

// DeviceMemory is the device memory a new allocation can use now (free in
// the driver plus what CUDA's pool keeps unused) and the device's total; it
// satisfies mem.DeviceMemory. On an error it reports nothing free.
func (c *CUDA) DeviceMemory() (free, total int64) {
	var f, t uint64
	var e cerr
	if c.fn.memInfo(c.index, &f, &t, e.p()) != 0 {
		return 0, int64(c.memTotal)
	}
	return int64(f), int64(t)
}

// Close waits for the uploads and kernels in flight, takes every transfer
// lane back, frees what open residents and staged jobs hold on the device,
// and gives back the pinned buffers and streams. Operations after Close
// fail with ErrClosed; Close again returns the first Close's error.
func (c *CUDA) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

func (c *CUDA) close() error {
	// No operation starts after this; those in flight (uploads, kernels)
	// are waited for. An upload waiting for a lane gives up (done).
	c.opMu.Lock()
	c.closing = true
	close(c.done)
	for c.ops > 0 {
		c.opDone.Wait()
	}
	c.opMu.Unlock()
	// Every lane and compute stream, taken back before their buffers and
	// streams are freed (an operation returns them before it ends, so none
	// waits here).
	for range c.all {
		<-c.lanes
	}
	for range c.allComp {
		<-c.computes
	}

	c.liveMu.Lock()
	residents, staged := c.residents, c.staged
	c.residents, c.staged = nil, nil
	c.liveMu.Unlock()
	var err error
	for st := range staged {
		err = errors.Join(err, c.freeStaged(st))
	}
	for r := range residents {
		err = errors.Join(err, r.free())
	}
	var e cerr
	for _, l := range c.all {
		for i, p := range l.pin {
			if p != nil {
				err = errors.Join(err, e.err("pinned free", c.fn.hostFree(p, e.p())))
				l.pin[i] = nil
			}
		}
		if l.stream != 0 {
			err = errors.Join(err, e.err("stream destroy", c.fn.streamDstr(l.stream, e.p())))
			l.stream = 0
		}
	}
	for _, k := range c.allComp {
		if k.stream != 0 {
			err = errors.Join(err, e.err("stream destroy", c.fn.streamDstr(k.stream, e.p())))
			k.stream = 0
		}
	}
	if c.xfer != 0 {
		err = errors.Join(err, e.err("stream destroy", c.fn.streamDstr(c.xfer, e.p())))
		c.xfer = 0
	}
	if c.ctx != 0 { // after its streams
		err = errors.Join(err, e.err("fini", c.fn.fini(c.ctx, e.p())))
		c.ctx = 0
	}
	return err
}

// enter begins an operation, which Close waits for; it fails once Close has
// begun. Each enter is paired with an exit.
func (c *CUDA) enter() error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if c.closing {
		return ErrClosed
	}
	c.ops++
	return nil
}

func (c *CUDA) exit() {
	c.opMu.Lock()
	c.ops--
	if c.ops == 0 {
		c.opDone.Broadcast()
	}
	c.opMu.Unlock()
}

// takeLane hands out a lane, or fails once Close has begun.
func (c *CUDA) takeLane() (*cudaLane, error) {
	select {
	case <-c.done:
		return nil, ErrClosed
	default:
	}
	select {
	case l := <-c.lanes:
		return l, nil
	case <-c.done:
		return nil, ErrClosed
	}
}

// takeCompute hands out a compute stream, or fails once Close has begun.
// The caller is inside enter and gives it back (c.computes <- k) before
// taking another: an operation never holds one stream while waiting for a
// second, so operations cannot deadlock over them.
func (c *CUDA) takeCompute() (*cudaCompute, error) {
	select {
	case <-c.done:
		return nil, ErrClosed
	default:
	}
	select {
	case k := <-c.computes:
		return k, nil
	case <-c.done:
		return nil, ErrClosed
	}
}

// tryTakeCompute hands out a compute stream if one is free now, else nil:
// an operation that holds one may take more this way, never waiting for
// them.
func (c *CUDA) tryTakeCompute() *cudaCompute {
	select {
	case <-c.done:
		return nil
	default:
	}
	select {
	case k := <-c.computes:
		return k
	default:
		return nil
	}
}

// onCompute runs f with a compute stream of its own; the caller is inside
// enter. f waits for its kernels when it succeeds; when it fails, the
// stream is waited for here, so that nothing still runs on the job's
// buffers when Free gives them back on the transfer stream.
func (c *CUDA) onCompute(f func(s uintptr) error) error {
	k, err := c.takeCompute()
	if err != nil {
		return err
	}
	defer func() { c.computes <- k }()
	if err := f(k.stream); err != nil {
		var e cerr
		return errors.Join(err, e.err("sync", c.fn.streamSync(k.stream, e.p())))
	}
	return nil
}

// alloc takes n bytes of device memory on stream s.
func (c *CUDA) alloc(n int, s uintptr) (uintptr, error) {
	var p uintptr
	var e cerr
	if err := e.err("alloc", c.fn.devAlloc(&p, uint64(n), s, e.p())); err != nil {
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
// On error nothing stays allocated. The caller is inside enter.
func (c *CUDA) stage(bufs []hostBuf) ([]uintptr, error) {
	out := make([]uintptr, len(bufs))
	free := func() {
		var e cerr
		for _, p := range out {
			if p != 0 {
				c.fn.devFree(p, c.xfer, e.p())
			}
		}
		c.fn.streamSync(c.xfer, e.p())
	}
	err := func() error {
		var e cerr
		for i, b := range bufs {
			p, err := c.alloc(b.total, c.xfer)
			if err != nil {
				return err
			}
			out[i] = p
			if b.total > b.n {
				if err := e.err("memset", c.fn.memset(p+uintptr(b.n), uint64(b.total-b.n), c.xfer, e.p())); err != nil {
					return err
				}
			}
		}
		// The lanes' streams use the buffers once their allocation is done.
		return e.err("sync", c.fn.streamSync(c.xfer, e.p()))
	}()
	if err != nil {
		free()
		return nil, err
	}
	piece := 4 * c.pinBytes
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		first = errors.Join(first, err)
		mu.Unlock()
	}
upload:
	for i, b := range bufs {
		for off := 0; off < b.n; off += piece {
			n := min(piece, b.n-off)
			dst, src := out[i]+uintptr(off), unsafe.Add(b.src, off)
			l, err := c.takeLane()
			if err != nil {
				fail(err)
				break upload
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var e cerr
				err := e.err("upload", c.fn.upload(dst, src, uint64(n), l.pin[0], l.pin[1], uint64(c.pinBytes), l.stream, e.p()))
				c.lanes <- l
				if err != nil {
					fail(err)
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
