package stages

import (
	"context"
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
	return j.Circuit.Source.Parse(ctx, j)
}
