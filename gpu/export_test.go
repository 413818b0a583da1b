package gpu

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/ebitengine/purego"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Test-only entry points of the CUDA backend (compiled into package gpu for
// its tests alone, so they are not part of its API).

// ComputeH returns h as MSMH computes it (n terms, by the key's convention),
// for tests against the CPU backend, as BN254's Fr (see ComputeHScalars).
// a, b and c are consumed.
func (c *CUDA) ComputeH(ctx context.Context, s *proofdata.Staged) ([]fr.Element, error) {
	h, err := c.ComputeHScalars(ctx, s)
	return proofdata.Elements[fr.Element](h), err
}

// ComputeHScalars is ComputeH for a key of any curve.
func (c *CUDA) ComputeHScalars(ctx context.Context, s *proofdata.Staged) ([]proofdata.Scalar, error) {
	r, st, done, err := c.compute(s)
	if err != nil {
		return nil, err
	}
	defer done()
	h := make([]proofdata.Scalar, r.key.N())
	return h, c.onCompute(func(cs uintptr) error {
		if err := c.computeH(r, st, cs); err != nil {
			return err
		}
		var e cerr
		return e.err("download", c.fn.download(unsafe.Pointer(&h[0]), st.a, uint64(len(h)*proofdata.ScalarBytes), cs, e.p()))
	})
}

// TimeNTT uploads x (length n of r's domain, scalars of its key's curve:
// any [4]uint64 element type) and returns the mean device time of one
// forward NTT over reps runs (CUDA events).
func TimeNTT[E ~[4]uint64](c *CUDA, res proofdata.Resident, x []E, reps int) (time.Duration, error) {
	r, ok := res.(*cudaResident)
	if !ok || len(x) != r.key.N() {
		return 0, fmt.Errorf("cuda: TimeNTT wants a CUDA resident and n elements")
	}
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.exit()
	ps, err := c.stage([]hostBuf{bufOf(x, len(x))})
	if err != nil {
		return 0, err
	}
	p := ps[0]
	var e cerr
	defer c.fn.devFree(p, c.xfer, e.p()) // after the bench waited for its kernels
	var ms float32
	err = c.onCompute(func(cs uintptr) error {
		return e.err("bench ntt", c.fn.benchNTT(r.cv.id(), p, int32(r.logn), r.tw, int32(reps), &ms, cs, e.p()))
	})
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// HostStandIn is the host stand-in library's test controls (hostlib.cpp);
// nil when c's library is the real one.
type HostStandIn struct {
	Fail      func(what string, nth int64) int32            // zk_host_fail
	FailOn    func(dev int32, what string, nth int64) int32 // zk_host_fail_on
	SetMemory func(total uint64)                            // zk_host_set_memory
	Allocated func() uint64                                 // zk_host_allocated
	Live      func() int64                                  // zk_host_live
	Pinned    func(live int32) uint64                       // zk_host_pinned
	Peak      func(reset int32) uint64                      // zk_host_peak
	SetDelay  func(us uint64)                               // zk_host_set_delay
	CallsPeak func(reset int32) int32                       // zk_host_calls_peak
	// SetDevices makes the stand-in n devices (zk_host_set_devices); tests
	// that raise it set it back to 1 when they end.
	SetDevices func(n int32) int32
	// contextConfig reads back the zk_config a context was made with.
	contextConfig func(ctx uintptr, out *zkConfig) int32
}

// LibraryConfig is the zk_config the library holds for c's context, as the
// stand-in reports it (zk_host_context_config): the CUDAConfig fields that
// reach the library. ok is false on the real library.
func (c *CUDA) LibraryConfig() (cfg CUDAConfig, ok bool) {
	h := c.HostStandIn()
	if h == nil {
		return cfg, false
	}
	var z zkConfig
	if h.contextConfig(c.ctx, &z) != 0 {
		return cfg, false
	}
	return CUDAConfig{MSMWindow: int(z.MSMWindow), MSMChunk: int(z.MSMChunk), MSMSegment: int(z.MSMSegment), Spin: z.Spin == 1,
		WaitPollMicros: int(z.WaitPollMicros), MSMPieceLog: int(z.MSMPieceLog)}, true
}

func (c *CUDA) HostStandIn() *HostStandIn {
	h := &HostStandIn{}
	for _, s := range []struct {
		name string
		ptr  any
	}{{"zk_host_fail", &h.Fail}, {"zk_host_fail_on", &h.FailOn}, {"zk_host_set_memory", &h.SetMemory}, {"zk_host_allocated", &h.Allocated}, {"zk_host_live", &h.Live}, {"zk_host_pinned", &h.Pinned}, {"zk_host_peak", &h.Peak},
		{"zk_host_set_delay", &h.SetDelay}, {"zk_host_calls_peak", &h.CallsPeak},
		{"zk_host_set_devices", &h.SetDevices}, {"zk_host_context_config", &h.contextConfig}} {
		sym, err := c.lib.sym(s.name)
		if err != nil {
			return nil
		}
		purego.RegisterFunc(s.ptr, sym)
	}
	return h
}

// StagedQuery downloads query i (0 A, 1 B, 2 K) of a staged job: its
// bitmap, its values and, unless dense, its indexes.
func (c *CUDA) StagedQuery(s *proofdata.Staged, i int) (ones []uint64, vals []proofdata.Scalar, idx []uint32, err error) {
	st, ok := s.Device.(*cudaStaged)
	if !ok {
		return nil, nil, nil, fmt.Errorf("cuda: not staged by the CUDA backend")
	}
	q := &st.q[i]
	ones, vals = make([]uint64, (q.len+63)/64), make([]proofdata.Scalar, q.nvals)
	if q.idx != 0 {
		idx = make([]uint32, q.nvals)
	}
	var e cerr
	down := func(dst unsafe.Pointer, src uintptr, bytes int) error {
		if bytes == 0 {
			return nil
		}
		return e.err("download", c.fn.download(dst, src, uint64(bytes), c.xfer, e.p()))
	}
	if err := down(unsafe.Pointer(unsafe.SliceData(ones)), q.ones, 8*len(ones)); err != nil {
		return nil, nil, nil, err
	}
	if err := down(unsafe.Pointer(unsafe.SliceData(vals)), q.vals, fr.Bytes*len(vals)); err != nil {
		return nil, nil, nil, err
	}
	if idx != nil {
		err = down(unsafe.Pointer(unsafe.SliceData(idx)), q.idx, 4*len(idx))
	}
	return ones, vals, idx, err
}

// CUDAABIVersion is the C ABI this package needs (zkpipe.h ZK_ABI_VERSION).
const CUDAABIVersion = cudaABIVersion

// SetFixedBaseWindow sets the window bits of c's fixed-base products (0:
// the library's choice by size), so a test runs several windows, the top
// window's carry included, at sizes the stand-in computes quickly.
func (c *CUDA) SetFixedBaseWindow(bits int) { c.fixedBaseWindow = int32(bits) }
