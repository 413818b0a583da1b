package gpu

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/sourcegraph/conc"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// CPU is the reference backend, on gnark-crypto. Its "device" is host memory,
// so Transfer stages nothing. Safe for concurrent use by many stage workers.
type CPU struct {
	// Tasks bounds the goroutines one MSM, FFT or batch-addition may use, so
	// that stage workers × Tasks can be fitted to the machine's cores.
	MSMTasks, FFTTasks int

	// share, when set (ShareCores), replaces MSMTasks and FFTTasks for the
	// heavy operations: each starts with the cores divided among those
	// running then.
	share *coreShare

	pad     mem.Pool[fr.Element] // a, b, c padded to n
	gather1 mem.Pool[bn254.G1Affine]
	gather2 mem.Pool[bn254.G2Affine]
}

// NewCPU returns a CPU backend; tasks ≤ 0 means one per core.
func NewCPU(msmTasks, fftTasks int) *CPU {
	if msmTasks <= 0 {
		msmTasks = runtime.NumCPU()
	}
	if fftTasks <= 0 {
		fftTasks = runtime.NumCPU()
	}
	c := &CPU{MSMTasks: msmTasks, FFTTasks: fftTasks}
	// Three padded vectors a job in NTT+MSM_H, and gathered bases a tail
	// MSM: mem.Pool's default of 4 a size drops them as soon as two jobs
	// run at once, and the next job faults them in again.
	c.pad.Limit, c.gather1.Limit, c.gather2.Limit = 16, 8, 8
	return c
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

// coreShare counts the heavy operations running on a CPU backend.
type coreShare struct {
	cores   int
	running atomic.Int64
}

// heavy returns the goroutines the heavy operation starting now may use
// (fixed without a share) and the func to call when it ends.
func (c *CPU) heavy(fixed int) (int, func()) {
	s := c.share
	if s == nil {
		return fixed, func() {}
	}
	r := s.running.Add(1)
	return max(1, s.cores/int(r)), func() { s.running.Add(-1) }
}

func (c *CPU) Name() string { return "cpu" }

type cpuResident struct{ key *proofdata.Key }

func (r cpuResident) Key() *proofdata.Key { return r.key }
func (r cpuResident) Close() error        { return nil }

// Load keeps the key where it is: host memory is the CPU's device memory.
func (c *CPU) Load(k *proofdata.Key) (proofdata.Resident, error) {
	if k.Domain == nil {
		return nil, fmt.Errorf("cpu: key has no domain")
	}
	return cpuResident{k}, nil
}

// Transfer stages nothing on the CPU.
func (c *CPU) Transfer(_ context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error) {
	return &proofdata.Staged{Resident: r, Host: v}, nil
}

// Free releases what Transfer staged: nothing, on the CPU.
func (c *CPU) Free(*proofdata.Staged) {}

// ─── NTT + MSM_H ─────────────────────────────────────────────────────────────

// MSMH computes h from a, b, c by the key's convention and returns [h(τ)·…]₁,
// the MSM of h against the H query. a, b, c are consumed.
func (c *CPU) MSMH(ctx context.Context, s *proofdata.Staged) (bn254.G1Jac, error) {
	var res bn254.G1Jac
	k := s.Resident.Key()
	h, err := c.ComputeH(ctx, k, s.Host)
	if err != nil {
		return res, err
	}
	defer c.pad.Put(h)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	tasks, done := c.heavy(c.MSMTasks)
	defer done()
	_, err = res.MultiExp(k.Z, h[:k.HLen()], ecc.MultiExpConfig{NbTasks: msmNbTasks(k.HLen(), tasks, runtime.NumCPU())})
	return res, err
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
func (c *CPU) ComputeH(ctx context.Context, k *proofdata.Key, v *proofdata.Vectors) ([]fr.Element, error) {
	n := k.N()
	if len(v.A) > n || len(v.B) > n || len(v.C) > n {
		return nil, fmt.Errorf("ntt: %d/%d/%d evaluations for a domain of %d", len(v.A), len(v.B), len(v.C), n)
	}
	d := k.Domain
	nb, done := c.heavy(c.FFTTasks)
	defer done()
	tasks := fft.WithNbTasks(nb)
	a, b, cc := c.padded(v.A, n), c.padded(v.B, n), c.padded(v.C, n)
	defer c.pad.Put(b)
	defer c.pad.Put(cc)

	// The three run at once; under a share they split its goroutines.
	each := tasks
	if c.share != nil {
		each = fft.WithNbTasks(max(1, (nb+2)/3))
	}
	var wg conc.WaitGroup // re-panics in this goroutine: the stage turns it into the job's error
	for _, x := range [][]fr.Element{a, b, cc} {
		wg.Go(func() {
			d.FFTInverse(x, fft.DIF, each)
			d.FFT(x, fft.DIT, fft.OnCoset(), each)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		c.pad.Put(a)
		return nil, err
	}

	switch k.HConvention {
	case proofdata.HDivideByZ:
		// 1/Z on the coset: Z(g·ω^i) = gⁿ·ω^{in} − 1 = gⁿ − 1 for every i.
		var zInv, one fr.Element
		one.SetOne()
		zInv.Exp(d.FrMultiplicativeGen, big.NewInt(int64(n)))
		zInv.Sub(&zInv, &one).Inverse(&zInv)
		parallel(n, nb, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				a[i].Mul(&a[i], &b[i]).Sub(&a[i], &cc[i]).Mul(&a[i], &zInv)
			}
		})
		d.FFTInverse(a, fft.DIF, fft.OnCoset(), tasks)
	case proofdata.HOddCoset:
		parallel(n, nb, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				a[i].Mul(&a[i], &b[i]).Sub(&a[i], &cc[i])
			}
		})
	default:
		c.pad.Put(a)
		return nil, fmt.Errorf("ntt: unknown H convention %d", k.HConvention)
	}
	return a, nil
}

// PutH gives back a buffer ComputeH returned.
func (c *CPU) PutH(h []fr.Element) { c.pad.Put(h) }

// padded copies x into a pooled buffer of length n, zero-filled past len(x).
func (c *CPU) padded(x []fr.Element, n int) []fr.Element {
	p := c.pad.Get(n)
	copy(p, x)
	clear(p[len(x):])
	return p
}

// ─── batch-addition ──────────────────────────────────────────────────────────

// BatchAddG1 sums, for each G1 query, the bases whose scalar is one.
func (c *CPU) BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	k, v := s.Resident.Key(), s.Host
	var out proofdata.G1Sums
	if err := checkQuery("A", &v.QA, len(k.A)); err != nil {
		return out, err
	}
	if err := checkQuery("B", &v.QB, len(k.B1)); err != nil {
		return out, err
	}
	if err := checkQuery("K", &v.QK, len(k.K)); err != nil {
		return out, err
	}
	out.A = SumOnesG1(k.A, &v.QA, c.MSMTasks)
	out.B1 = SumOnesG1(k.B1, &v.QB, c.MSMTasks)
	out.K = SumOnesG1(k.K, &v.QK, c.MSMTasks)
	return out, ctx.Err()
}

// BatchAddG2 sums the B query's G2 bases whose scalar is one.
func (c *CPU) BatchAddG2(ctx context.Context, s *proofdata.Staged) (bn254.G2Jac, error) {
	k, v := s.Resident.Key(), s.Host
	if err := checkQuery("B", &v.QB, len(k.B2)); err != nil {
		return bn254.G2Jac{}, err
	}
	return SumOnesG2(k.B2, &v.QB, c.MSMTasks), ctx.Err()
}

// SumOnesG1 returns Σ bases[j] over the j whose scalar q classified as one,
// split into up to tasks chunks summed in parallel.
func SumOnesG1(bases []bn254.G1Affine, q *proofdata.Query, tasks int) bn254.G1Jac {
	parts := make([]bn254.G1Jac, max(tasks, 1))
	used := parallel(q.Len, tasks, func(chunk, lo, hi int) {
		var acc bn254.G1Jac
		forOnes(q, lo, hi, func(j int) { acc.AddMixed(&bases[j]) })
		parts[chunk] = acc
	})
	var sum bn254.G1Jac
	for i := range parts[:used] {
		sum.AddAssign(&parts[i])
	}
	return sum
}

// SumOnesG2 is SumOnesG1 in G2.
func SumOnesG2(bases []bn254.G2Affine, q *proofdata.Query, tasks int) bn254.G2Jac {
	parts := make([]bn254.G2Jac, max(tasks, 1))
	used := parallel(q.Len, tasks, func(chunk, lo, hi int) {
		var acc bn254.G2Jac
		forOnes(q, lo, hi, func(j int) { acc.AddMixed(&bases[j]) })
		parts[chunk] = acc
	})
	var sum bn254.G2Jac
	for i := range parts[:used] {
		sum.AddAssign(&parts[i])
	}
	return sum
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
	k, v := s.Resident.Key(), s.Host
	var out proofdata.G1Sums
	for _, t := range []struct {
		name  string
		dst   *bn254.G1Jac
		bases []bn254.G1Affine
		q     *proofdata.Query
	}{{"A", &out.A, k.A, &v.QA}, {"B", &out.B1, k.B1, &v.QB}, {"K", &out.K, k.K, &v.QK}} {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := c.tailG1(t.dst, t.bases, t.q); err != nil {
			return out, fmt.Errorf("tail msm %s: %w", t.name, err)
		}
	}
	return out, nil
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

func (c *CPU) tailG1(dst *bn254.G1Jac, bases []bn254.G1Affine, q *proofdata.Query) error {
	if err := checkQuery("", q, len(bases)); err != nil {
		return err
	}
	if len(q.Vals) == 0 {
		*dst = bn254.G1Jac{} // Z = 0: the point at infinity, as gnark-crypto's Jacobian code reads it
		return nil
	}
	tasks, done := c.heavy(c.MSMTasks)
	defer done()
	cfg := ecc.MultiExpConfig{NbTasks: msmNbTasks(len(q.Vals), tasks, runtime.NumCPU())}
	if q.Dense {
		_, err := dst.MultiExp(bases, q.Vals, cfg)
		return err
	}
	g := c.gather1.Get(len(q.Idx))
	defer c.gather1.Put(g)
	parallel(len(q.Idx), c.MSMTasks, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			g[k] = bases[q.Idx[k]]
		}
	})
	_, err := dst.MultiExp(g, q.Vals, cfg)
	return err
}

// ─── B_G2 ────────────────────────────────────────────────────────────────────

// MSMG2 runs the G2 MSM of the B query's significant scalars.
func (c *CPU) MSMG2(ctx context.Context, s *proofdata.Staged) (bn254.G2Jac, error) {
	k, q := s.Resident.Key(), &s.Host.QB
	var res bn254.G2Jac
	if err := checkQuery("B", q, len(k.B2)); err != nil {
		return res, err
	}
	if len(q.Vals) == 0 {
		return res, nil // zero value: Z = 0, the point at infinity
	}
	tasks, done := c.heavy(c.MSMTasks)
	defer done()
	cfg := ecc.MultiExpConfig{NbTasks: msmNbTasks(len(q.Vals), tasks, runtime.NumCPU())}
	if q.Dense {
		_, err := res.MultiExp(k.B2, q.Vals, cfg)
		return res, err
	}
	g := c.gather2.Get(len(q.Idx))
	defer c.gather2.Put(g)
	parallel(len(q.Idx), c.MSMTasks, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			g[j] = k.B2[q.Idx[j]]
		}
	})
	if _, err := res.MultiExp(g, q.Vals, cfg); err != nil {
		return res, err
	}
	return res, ctx.Err()
}

// ─── what a host backend lacks ───────────────────────────────────────────────
//
// The rest of stages.Backend: the capabilities of a device with memory of
// its own, which the CPU says it does not have.

// ClassifiesOnTransfer is false: the stage classifies on the host, into the
// engine's pools, and calls Transfer.
func (c *CPU) ClassifiesOnTransfer() bool { return false }

// TransferClassify is unsupported: see ClassifiesOnTransfer.
func (c *CPU) TransferClassify(context.Context, proofdata.Resident, *proofdata.Vectors, []fr.Element, []uint32, []uint32, []uint32, bool) (*proofdata.Staged, error) {
	return nil, fmt.Errorf("cpu: classify on transfer: %w", errors.ErrUnsupported)
}

// On is "": the CPU is one device.
func (c *CPU) On(*proofdata.Staged) string { return "" }

// ResidentBytes is 0: a key stays in host memory, counted there.
func (c *CPU) ResidentBytes(*proofdata.Key) int64 { return 0 }

// JobBytes is 0: a job's vectors stay in host memory, counted there.
func (c *CPU) JobBytes(*proofdata.Key) int64 { return 0 }

// DeviceMemory is 0, 0: no device memory, no device budget.
func (c *CPU) DeviceMemory() (free, total int64) { return 0, 0 }

// PinnedBytes is 0: the CPU pins nothing.
func (c *CPU) PinnedBytes() int { return 0 }

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
