package stages

import "context"

// batchAdd sums, for A, B₁, K and B₂, the bases whose scalar is one: one
// point addition each, no scalar multiplication.
func (e *Engine) batchAdd(ctx context.Context, j *Job) error {
	ones, err := e.cfg.Backend.BatchAddG1(ctx, j.Staged)
	if err != nil {
		return err
	}
	onesB2, err := e.cfg.G2.BatchAddG2(ctx, j.Staged)
	if err != nil {
		return err
	}
	j.Ones, j.OnesB2 = ones, onesB2
	return nil
}
