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
	switch {
	case j.Request.Circuit != "":
		c, ok := e.circuits[j.Request.Circuit]
		if !ok {
			return fmt.Errorf("unknown circuit %q (loaded: %v)", j.Request.Circuit, e.CircuitNames())
		}
		j.Circuit = c
	case e.only != nil:
		j.Circuit = e.only
	default:
		return fmt.Errorf("no circuit named, and %d are loaded: %v", len(e.circuits), e.CircuitNames())
	}
	return j.Circuit.Source.Parse(ctx, j)
}
