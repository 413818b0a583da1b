package stages

import (
	"context"

	"github.com/zkpipe/zkpipe/proofdata"
)

// TailMSM runs the Pippenger MSMs of the significant scalars of A, B₁ and K.
// The A and K queries are dead afterwards (B's scalars wait for B_G2).
func (st *Steps) TailMSM(ctx context.Context, j *Job) error {
	tails, err := st.Backend.TailMSMG1(ctx, j.Staged)
	if err != nil {
		return err
	}
	j.Tails = tails
	return nil
}

// TailMSMBatch is TailMSM for several jobs at once (--tail-msm-batch): on
// a backend that batches, the jobs of one circuit share each query's MSM
// run over their common bases; elsewhere they run in turn (gpu.CPU). errs[i] is
// jobs[i]'s.
func (st *Steps) TailMSMBatch(ctx context.Context, jobs []*Job) []error {
	ss := make([]*proofdata.Staged, len(jobs))
	for i, j := range jobs {
		ss[i] = j.Staged
	}
	tails, errs := st.Backend.TailMSMG1Batch(ctx, ss)
	for i, j := range jobs {
		if errs[i] == nil {
			j.Tails = tails[i]
		}
	}
	return errs
}
