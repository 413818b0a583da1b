package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/sourcegraph/conc"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// CPU is the reference backend, on gnark-crypto (and cpumsm, its MSM with
// the scratch kept), for every curve (each curve's half in cpu_<curve>.go).
// Its "device" is host memory, so Transfer stages nothing. Safe for
// concurrent use by many stage workers.
type CPU struct {
	// Tasks bounds the goroutines one MSM, FFT or batch-addition may use, so
	// that stage workers × Tasks can be fitted to the machine's cores.
	MSMTasks, FFTTasks int

	// share, when set (ShareCores), replaces MSMTasks and FFTTasks for the
	// heavy operations: each starts with the cores divided among those
	// running then.
	share *coreShare

	// gate holds a slot for each heavy operation running (LimitHeavy);
	// nil: no bound.
	gate chan struct{}

	pad    mem.Pool[proofdata.Scalar] // a, b, c padded to n, any curve
	curves [curve.Count]cpuCurve      // by curve.ID: its gathered bases' pools and arithmetic
}

// DefaultHeavyOps is how many heavy operations (an MSM; H's NTTs) a CPU
// backend runs at once unless LimitHeavy says otherwise: 0, no bound. A
// bound of two was meant to keep the MSMs' buckets in cache, but on the
// H200 host (2026-12-03, BLS12-381 mulchain 2^20, 8 proofs in one call) two
// gave 0.243 proofs/s and 64.2 s of CPU a proof against 0.250 and 63.2 s
// with no bound: it did not earn its place (notes/h200-2026-12-03b.md). Each
// MSM (gnark-crypto's then, cpumsm's now, which runs alike) runs a
// goroutine a window, each with its own buckets
// (2^15 of them at 2^20 points: 9.4 MiB for BLS12-381's G1, 19 MiB for its
// G2, two thirds of that for BN254); six stage workers' MSMs at once (the
// stream's msm-h, tail-msm and b-g2 at two workers each) ran 6 × 16
// goroutines on 16 cores, whose buckets no cache holds: on the H200 host
// that cost BLS12-381 23% more CPU a proof than one proof at a time, BN254
// 8% (notes/bench.md).
const DefaultHeavyOps = 0

// NewCPU returns a CPU backend that runs DefaultHeavyOps heavy operations
// at once (0: no bound); tasks ≤ 0 means one per core.
func NewCPU(msmTasks, fftTasks int) *CPU {
	if msmTasks <= 0 {
		msmTasks = runtime.NumCPU()
	}
	if fftTasks <= 0 {
		fftTasks = runtime.NumCPU()
	}
	c := &CPU{MSMTasks: msmTasks, FFTTasks: fftTasks}
	// Three padded vectors a job in NTT+MSM_H, and gathered bases a tail
	// MSM (each curve's half sets its own): mem.Pool's default of 4 a size
	// drops them as soon as two jobs run at once, and the next job faults
	// them in again.
	c.pad.Limit = 16
	c.LimitHeavy(DefaultHeavyOps)
	for id, mk := range cpuCurves {
		if mk != nil {
			c.curves[id] = mk(c)
		}
	}
	return c
}

// The MSMs' scratch each curve's half keeps (cpumsm.Scratch…): window
// sets of each group and digit buffers. An MSM runs a set a window at once
// (up to 20 at 2^16 points, 16 at 2^20, with cpumsm.Tasks); the stream's
// stages run an MSM each, a tail's three one after another, so 64 sets a
// group cover three workers' MSMs at once and then some. A set is what
// gnark-crypto's MultiExp allocated for a window each call, 2^(c−1)
// buckets of 3 affine sizes (c = 16, 2^20 points: 6 MiB in BN254's G1,
// 9 MiB in BLS12-381's, twice that in G2), kept only up to what was once
// in use at the same time; a digit buffer is 2 bytes a window of a scalar
// (32 MiB at 2^20 points). MSMScratchBytes says what is kept.
const (
	msmScratchSets   = 64
	msmScratchDigits = 8
)

// MSMScratchBytes is the bytes the MSMs' scratch keeps between MSMs, all
// curves. The governor's resident figure does not count them; each job's
// reservation still holds its MSM's scratch (stages.msmScratch), which a
// warm MSM takes from these instead of allocating.
func (c *CPU) MSMScratchBytes() int64 {
	var n int64
	for _, h := range c.curves {
		if h != nil {
			n += h.scratchBytes()
		}
	}
	return n
}

// ShareCores makes each heavy operation (an MSM; H's NTTs) take
// max(1, cores ÷ heavy operations running, itself included) goroutines
// when it starts, instead of MSMTasks or FFTTasks each: stage workers that
// run MSMs at once then split the cores rather than each asking for all of
// them (gnark-crypto runs an MSM given fewer tasks than cores under a
// semaphore of that many goroutines). An operation keeps its count to its
// end, so cores that one finishing frees wait for the next one to start.
// cores ≤ 0 means one per core. Call it before the backend is used.
func (c *CPU) ShareCores(cores int) {
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	c.share = &coreShare{cores: cores}
}

// LimitHeavy has at most n heavy operations (an MSM; H's NTTs, the three
// at once counting as one) run at once; the others wait for a slot, in
// the order they asked. n ≤ 0: no bound, every one starts at once. Call it
// before the backend is used.
func (c *CPU) LimitHeavy(n int) {
	c.gate = nil
	if n > 0 {
		c.gate = make(chan struct{}, n)
	}
}

// coreShare counts the heavy operations running on a CPU backend.
type coreShare struct {
	cores   int
	running atomic.Int64
}

// heavy waits for a slot of the gate (LimitHeavy), then returns the
// goroutines the heavy operation starting now may use (fixed without a
// share) and the func to call when it ends; ctx's error if it ends first.
func (c *CPU) heavy(ctx context.Context, fixed int) (int, func(), error) {
	release := func() {}
	if c.gate != nil {
		select {
		case c.gate <- struct{}{}:
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		}
		release = func() { <-c.gate }
	}
	s := c.share
	if s == nil {
		return fixed, release, nil
	}
	r := s.running.Add(1)
	return max(1, s.cores/int(r)), func() { s.running.Add(-1); release() }, nil
}

func (c *CPU) Name() string { return "cpu" }

type cpuResident struct{ key *proofdata.Key }

func (r cpuResident) Key() *proofdata.Key { return r.key }
func (r cpuResident) Close() error        { return nil }

// Load keeps the key where it is: host memory is the CPU's device memory.
// Any curve of package curve.
func (c *CPU) Load(k *proofdata.Key) (proofdata.Resident, error) {
	h, err := c.half(k)
	if err != nil {
		return nil, err
	}
	if err := h.load(k); err != nil {
		return nil, err
	}
	return cpuResident{k}, nil
}

// Transfer stages nothing on the CPU.
func (c *CPU) Transfer(_ context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error) {
	return &proofdata.Staged{Resident: r, Host: v}, nil
}

// Free releases what Transfer staged: nothing, on the CPU.
func (c *CPU) Free(*proofdata.Staged) {}

// ─── the curve's half ────────────────────────────────────────────────────────

// cpuCurve is the CPU backend's work over one curve (cpu_<curve>.go, made
// from one template by internal/generator): every method reads the key's
// bases in the curve's own types. One interface call a job and stage.
type cpuCurve interface {
	load(k *proofdata.Key) error
	scratchBytes() int64
	msmH(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) (proofdata.Point, error)
	computeH(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) ([]proofdata.Scalar, error)
	batchAddG1(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) (proofdata.G1Sums, error)
	batchAddG2(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) (proofdata.Point, error)
	tailMSMG1(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) (proofdata.G1Sums, error)
	msmG2(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) (proofdata.Point, error)
}

// half is k's curve's half of c.
func (c *CPU) half(k *proofdata.Key) (cpuCurve, error) {
	if !k.Curve.Valid() || c.curves[k.Curve] == nil {
		return nil, fmt.Errorf("cpu: no %s arithmetic: %w", k.Curve, errors.ErrUnsupported)
	}
	return c.curves[k.Curve], nil
}

// ─── NTT + MSM_H ─────────────────────────────────────────────────────────────

// MSMH computes h from a, b, c by the key's convention and returns [h(τ)·…]₁,
// the MSM of h against the H query. a, b, c are consumed.
func (c *CPU) MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	k := s.Resident.Key()
	h, err := c.half(k)
	if err != nil {
		return nil, err
	}
	return h.msmH(ctx, k, s.Host)
}

// ComputeH returns h in a pooled buffer of length n (give it back with
// PutH); only its first k.HLen() terms are meaningful.
//
// gnark (HDivideByZ), as in gnark's prover:
//  1. a, b, c ← iNTT(a, b, c)                      coefficients, bit-reversed (DIF)
//  2. a, b, c ← NTT on the coset g·⟨ω⟩             natural order (DIT)
//  3. h ← iNTT_coset((a·b − c) / Z(g·ω^i))         Z = gⁿ − 1 is one constant on the coset
//
// h comes out bit-reversed, as pk.G1.Z expects, with n−1 meaningful terms
// (deg h = 2(n−1) − n).
//
// snarkjs (HOddCoset): steps 1 and 2 with the coset shift ω₂ₙ, then
// h = a·b − c pointwise: the zkey's H points are the odd Lagrange bases of the
// 2n domain, so there is no division and no last iNTT; n terms, natural order.
func (c *CPU) ComputeH(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) ([]proofdata.Scalar, error) {
	h, err := c.half(k)
	if err != nil {
		return nil, err
	}
	return h.computeH(ctx, k, v)
}

// PutH gives back a buffer ComputeH returned.
func (c *CPU) PutH(h []proofdata.Scalar) { c.pad.Put(h) }

// padded copies x into a pooled buffer of length n, zero-filled past len(x).
func (c *CPU) padded(x []proofdata.Scalar, n int) []proofdata.Scalar {
	p := c.pad.Get(n)
	copy(p, x)
	clear(p[len(x):])
	return p
}

// ─── batch-addition ──────────────────────────────────────────────────────────

// BatchAddG1 sums, for each G1 query, the bases whose scalar is one.
func (c *CPU) BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	k := s.Resident.Key()
	h, err := c.half(k)
	if err != nil {
		return proofdata.G1Sums{}, err
	}
	return h.batchAddG1(ctx, k, s.Host)
}

// BatchAddG2 sums the B query's G2 bases whose scalar is one.
func (c *CPU) BatchAddG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	k := s.Resident.Key()
	h, err := c.half(k)
	if err != nil {
		return nil, err
	}
	return h.batchAddG2(ctx, k, s.Host)
}

// forOnes calls f for each j in [lo, hi) whose bit is set, a word at a time.
func forOnes(q *proofdata.Query, lo, hi int, f func(j int)) {
	for j := lo; j < hi; {
		w := q.Ones[j>>6] >> (uint(j) & 63)
		if w == 0 {
			j = (j | 63) + 1
			continue
		}
		if w&1 != 0 {
			f(j)
		}
		j++
	}
}

// ─── tail-MSM ────────────────────────────────────────────────────────────────

// TailMSMG1 runs the MSM of the significant scalars of the A, B and K queries.
func (c *CPU) TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	k := s.Resident.Key()
	h, err := c.half(k)
	if err != nil {
		return proofdata.G1Sums{}, err
	}
	return h.tailMSMG1(ctx, k, s.Host)
}

// TailMSMG1Batch runs TailMSMG1 for each job in turn: the CPU's MSM has
// no cross-proof batching (one MSM already takes every core it is given).
func (c *CPU) TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) ([]proofdata.G1Sums, []error) {
	out, errs := make([]proofdata.G1Sums, len(ss)), make([]error, len(ss))
	for i, s := range ss {
		out[i], errs[i] = c.TailMSMG1(ctx, s)
	}
	return out, errs
}

// ─── B_G2 ────────────────────────────────────────────────────────────────────

// MSMG2 runs the G2 MSM of the B query's significant scalars.
func (c *CPU) MSMG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	k := s.Resident.Key()
	h, err := c.half(k)
	if err != nil {
		return nil, err
	}
	return h.msmG2(ctx, k, s.Host)
}

// ─── what a host backend lacks ───────────────────────────────────────────────
//
// The rest of stages.Backend: the capabilities of a device with memory of
// its own, which the CPU says it does not have.

// ClassifiesOnTransfer is false: the stage classifies on the host, into the
// engine's pools, and calls Transfer.
func (c *CPU) ClassifiesOnTransfer() bool { return false }

// TransferClassify is unsupported: see ClassifiesOnTransfer.
func (c *CPU) TransferClassify(context.Context, proofdata.Resident, *proofdata.Vectors, []proofdata.Scalar, []uint32, []uint32, []uint32, bool) (*proofdata.Staged, error) {
	return nil, fmt.Errorf("cpu: classify on transfer: %w", errors.ErrUnsupported)
}

// On is "": the CPU is one device.
func (c *CPU) On(*proofdata.Staged) string { return "" }

// HostKey is every part: host memory is the CPU's device memory, and its
// stages read the bases and domain there.
func (c *CPU) HostKey(*proofdata.Key) proofdata.KeyParts { return proofdata.AllParts }

// HostKeyG2 is B₂: the CPU's B_G2 reads those bases from the host copy.
func (c *CPU) HostKeyG2(*proofdata.Key) proofdata.KeyParts { return proofdata.PartB2 }

// StagesOnDevice is false: the stages read a, b, c and the queries where
// they are, in host memory.
func (c *CPU) StagesOnDevice() bool { return false }

// ResidentBytes is 0: a key stays in host memory, counted there.
func (c *CPU) ResidentBytes(*proofdata.Key) int64 { return 0 }

// JobBytes is 0: a job's vectors stay in host memory, counted there.
func (c *CPU) JobBytes(*proofdata.Key, int) int64 { return 0 }

// DeviceMemory is 0, 0: no device memory, no device budget.
func (c *CPU) DeviceMemory() (free, total int64) { return 0, 0 }

// PinnedBytes is 0: the CPU pins nothing.
func (c *CPU) PinnedBytes() int { return 0 }

// PinnedKeyBytes is 0: a key stays in ordinary host memory.
func (c *CPU) PinnedKeyBytes(*proofdata.Key) int64 { return 0 }

// PinnedSlots is 0, 0: nothing is staged through pinned buffers.
func (c *CPU) PinnedSlots() (slot, slots int) { return 0, 0 }

// PinnedAlloc is unsupported: see PinnedSlots.
func (c *CPU) PinnedAlloc(int) ([]byte, func() error, error) {
	return nil, nil, fmt.Errorf("cpu: pinned memory: %w", errors.ErrUnsupported)
}

// UsePinned does nothing: see PinnedSlots.
func (c *CPU) UsePinned(*mem.PinnedPool) {}

// ─── helpers ─────────────────────────────────────────────────────────────────

func checkQuery(name string, q *proofdata.Query, nbBases int) error {
	switch {
	case q.Len != nbBases:
		return fmt.Errorf("query %s has %d scalars for %d bases", name, q.Len, nbBases)
	case len(q.Ones) < (q.Len+63)/64:
		return fmt.Errorf("query %s: bitmap of %d words for %d scalars", name, len(q.Ones), q.Len)
	case q.Dense && len(q.Vals) != q.Len:
		return fmt.Errorf("query %s: dense with %d of %d scalars", name, len(q.Vals), q.Len)
	case !q.Dense && len(q.Idx) != len(q.Vals):
		return fmt.Errorf("query %s: %d indexes for %d scalars", name, len(q.Idx), len(q.Vals))
	}
	return nil
}

// parallel splits [0, n) into at most tasks chunks run concurrently and
// returns how many chunks it used. A panic in a chunk is re-raised in the
// caller's goroutine (conc.WaitGroup), where the pipeline makes it the job's
// error instead of a crash of the process.
func parallel(n, tasks int, f func(chunk, lo, hi int)) int {
	if n == 0 {
		return 0
	}
	tasks = max(1, min(tasks, n))
	if tasks == 1 {
		f(0, 0, n)
		return 1
	}
	var wg conc.WaitGroup
	for i := 0; i < tasks; i++ {
		lo, hi := i*n/tasks, (i+1)*n/tasks
		wg.Go(func() { f(i, lo, hi) })
	}
	wg.Wait()
	return tasks
}
