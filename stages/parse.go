package stages

import (
	"context"
	"fmt"
)

// Parse has the job's circuit's source read or generate the witness and
// check its sizes; the engine has resolved j.Circuit (its keys already
// resident). A line that was already bad when read fails here, alone.
func (st *Steps) Parse(ctx context.Context, j *Job) error {
	if j.Err != nil {
		return j.Err
	}
	if j.Circuit == nil {
		return fmt.Errorf("job %s: no circuit resolved", j.ID)
	}
	if err := j.Circuit.Source.Parse(ctx, j); err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != ctx.Err() {
			return fmt.Errorf("%w: %w", err, context.Cause(ctx))
		}
		return err
	}
	return nil
}
