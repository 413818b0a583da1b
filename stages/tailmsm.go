package stages

import (
	"context"

	"github.com/zkpipe/zkpipe/proofdata"
)

// tailMSM runs the Pippenger MSMs of the significant scalars of A, B₁ and K.
// The A and K queries are dead afterwards (B's scalars wait for B_G2).
func (e *Engine) tailMSM(ctx context.Context, j *Job) error {
	tails, err := e.cfg.Backend.TailMSMG1(ctx, j.Staged)
	if err != nil {
		return err
	}
	j.Tails = tails
	return nil
}

// tailMSMBatch is tailMSM for several jobs at once (--tail-msm-batch): on
// a backend that batches, the jobs of one circuit share each query's MSM
// run over their common bases; elsewhere they run in turn. errs[i] is
// jobs[i]'s.
func (e *Engine) tailMSMBatch(ctx context.Context, jobs []*Job) []error {
	ss := make([]*proofdata.Staged, len(jobs))
	for i, j := range jobs {
		ss[i] = j.Staged
	}
	var tails []proofdata.G1Sums
	var errs []error
	if b, ok := e.cfg.Backend.(TailBatcher); ok {
		tails, errs = b.TailMSMG1Batch(ctx, ss)
	} else {
		tails, errs = make([]proofdata.G1Sums, len(ss)), make([]error, len(ss))
		for i, s := range ss {
			tails[i], errs[i] = e.cfg.Backend.TailMSMG1(ctx, s)
		}
	}
	for i, j := range jobs {
		if errs[i] == nil {
			j.Tails = tails[i]
		}
	}
	return errs
}
