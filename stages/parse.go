package stages

import (
	"context"
	"fmt"
)

// parse resolves the job's circuit (its keys are already resident) and has
// the circuit's source read or generate the witness and check its sizes.
// A line that was already bad when read fails here, alone.
func (e *Engine) parse(ctx context.Context, j *Job) error {
	if j.Err != nil {
		return j.Err
	}
	if e.poolVectors {
		j.pools = &e.vectors
	}
	if j.Circuit == nil {
		c, err := e.Circuit(j.Request.Circuit)
		if err != nil {
			return err
		}
		j.Circuit = c
	}
	if j.Reads != nil {
		// ends with either: a drain must not wait on a FIFO (Job.Reads)
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		defer context.AfterFunc(j.Reads, func() { cancel(context.Cause(j.Reads)) })()
	}
	if err := j.Circuit.Source.Parse(ctx, j); err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != ctx.Err() {
			return fmt.Errorf("%w: %w", err, context.Cause(ctx))
		}
		return err
	}
	return nil
}
