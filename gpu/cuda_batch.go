package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkpipe/zkpipe/proofdata"
)

// Cross-proof batching of the tail MSMs: the A, B₁ and K MSMs of several
// jobs of one circuit read the same resident bases (or their tables), so one
// run of the library's MSM driver serves them all (zk_msm with k vectors,
// gpu/cuda/driver.cuh msm_run_batch): each job's digits key bucket sets of
// its own, one sort takes every job's digits, and each level, segment and
// reduce step is one launch for all. A short tail leaves most of the GPU
// idle in each of those launches; k tails fill it k times better.

// g1Query is the sum of the i-th G1 query: A, B₁, K.
func g1Query(s *proofdata.G1Sums, i int) *proofdata.Point {
	return [...]*proofdata.Point{&s.A, &s.B1, &s.K}[i]
}

// tails runs the A, B₁ and K tail MSMs of the jobs sts of resident r: one
// job's through the single MSM entry, several jobs' as one batched run a
// query. The three queries are independent: with the tail split on, each
// takes a compute stream of its own and they run at once where streams are
// free (an MSM of a short tail leaves most of the GPU idle; two of 2^20
// points overlap their sorts and reductions).
func (c *CUDA) tails(ctx context.Context, r *cudaResident, sts []*cudaStaged) ([]proofdata.G1Sums, error) {
	out := make([]proofdata.G1Sums, len(sts))
	if r.streamed {
		for j, st := range sts {
			if st.tails == nil {
				return out, fmt.Errorf("cuda: the tails of streamed bases run in batch-addition (BatchAddG1), which has not run")
			}
			out[j] = *st.tails
		}
		return out, ctx.Err()
	}
	bases := [3]uintptr{r.a, r.b1, r.k}
	names := [3]string{"A", "B", "K"}
	var errs [3]error
	run := func(i int) {
		errs[i] = c.onCompute(func(cs uintptr) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			tab, _ := r.table(bases[i])
			vecs := make([]msmVec, len(sts))
			for j, st := range sts {
				q := &st.q[i]
				vecs[j] = msmVec{scalars: q.vals, idx: q.idx, n: q.nvals}
			}
			op := "msm g1"
			if len(sts) > 1 {
				op = "msm batch g1"
			}
			ps, err := r.cv.msmG1(c.fn, tab, op, bases[i], vecs, cs)
			for j, p := range ps {
				*g1Query(&out[j], i) = p
			}
			return err
		})
		if errs[i] != nil && errs[i] != ctx.Err() {
			errs[i] = fmt.Errorf("tail msm %s: %w", names[i], errs[i])
		}
	}
	if r.tailsAtOnce == 1 {
		for i := range bases {
			if run(i); errs[i] != nil {
				return out, errs[i]
			}
		}
		return out, nil
	}
	var wg sync.WaitGroup
	for i := range bases {
		wg.Go(func() { run(i) })
	}
	wg.Wait()
	// The first failure in A, B, K order, as the serial loop reports it.
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// TailMSMG1Batch is TailMSMG1 for several jobs at once: the jobs of one
// circuit run each query's MSMs as one batched run (up to MaxMSMBatch
// jobs a run). out[i] and errs[i] are ss[i]'s. A job the backend cannot
// run (another backend's, freed) fails alone. A failed batched run is
// tried again job by job (its scratch is k times one job's: each alone may
// fit), unless the device is lost or ctx is done; only then do the jobs of
// that run share its error.
func (c *CUDA) TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) (out []proofdata.G1Sums, errs []error) {
	out, errs = make([]proofdata.G1Sums, len(ss)), make([]error, len(ss))
	type group struct {
		r   *cudaResident
		at  []int
		sts []*cudaStaged
	}
	var groups []*group
	for i, s := range ss {
		r, st, done, err := c.compute(s)
		if err != nil {
			errs[i] = err
			continue
		}
		defer done()
		var g *group
		for _, h := range groups {
			if h.r == r && len(h.at) < MaxMSMBatch {
				g = h
			}
		}
		if g == nil {
			g = &group{r: r}
			groups = append(groups, g)
		}
		g.at, g.sts = append(g.at, i), append(g.sts, st)
	}
	for _, g := range groups {
		sums, err := c.tails(ctx, g.r, g.sts)
		if err != nil && len(g.sts) > 1 && ctx.Err() == nil && !errors.Is(err, ErrDeviceLost) {
			for j, st := range g.sts {
				one, err := c.tails(ctx, g.r, []*cudaStaged{st})
				out[g.at[j]], errs[g.at[j]] = one[0], err
			}
			continue
		}
		for j, i := range g.at {
			out[i] = sums[j]
			if err != nil {
				errs[i] = fmt.Errorf("batch of %d: %w", len(g.at), err)
			}
		}
	}
	return out, errs
}
