package stages

import "context"

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
