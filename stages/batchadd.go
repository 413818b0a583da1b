package stages

import "context"

// BatchAdd sums, for A, B₁, K and B₂, the bases whose scalar is one: one
// point addition each, no scalar multiplication.
func (st *Steps) BatchAdd(ctx context.Context, j *Job) error {
	ones, err := st.Backend.BatchAddG1(ctx, j.Staged)
	if err != nil {
		return err
	}
	onesB2, err := st.g2().BatchAddG2(ctx, j.Staged)
	if err != nil {
		return err
	}
	j.Ones, j.OnesB2 = ones, onesB2
	return nil
}
