package stages

import (
	"context"
	"fmt"
)

// Synthesize solves the R1CS for the full wire vector W and the constraint
// evaluations a = A·W, b = B·W, c = C·W. An unsatisfied witness fails here
// and never reaches a proof.
func (st *Steps) Synthesize(ctx context.Context, j *Job) error {
	if err := j.Circuit.Source.Synthesize(ctx, j); err != nil {
		return err
	}
	if len(j.W) != j.Circuit.NbWires {
		return fmt.Errorf("solver gave %d wires, circuit %s has %d", len(j.W), j.Circuit.Name, j.Circuit.NbWires)
	}
	return nil
}
