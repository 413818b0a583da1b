package stages

import (
	"context"
	"fmt"
)

// admit reserves the job's footprint with the memory governor before its
// vectors exist; waiting here pushes back on parse.
func (e *Engine) admit(ctx context.Context, j *Job) error {
	if e.cfg.Governor == nil || j.Circuit == nil {
		return nil
	}
	r, err := e.cfg.Governor.Admit(ctx, j.ID, j.Circuit.Footprint())
	if err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	j.Reservation = r
	return nil
}

// synthesize solves the R1CS for the full wire vector W and the constraint
// evaluations a = A·W, b = B·W, c = C·W. An unsatisfied witness fails here
// and never reaches a proof.
func (e *Engine) synthesize(ctx context.Context, j *Job) error {
	if err := j.Circuit.Source.Synthesize(ctx, j); err != nil {
		return err
	}
	if len(j.W) != j.Circuit.NbWires {
		return fmt.Errorf("solver gave %d wires, circuit %s has %d", len(j.W), j.Circuit.Name, j.Circuit.NbWires)
	}
	return nil
}
