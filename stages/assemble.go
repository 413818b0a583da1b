package stages

import (
	"context"
	"fmt"
)

// Assemble adds the batch sums and tails and randomises with fresh r, s from
// crypto/rand (fr.Element.SetRandom), over the circuit's curve:
//
//	Ar  = [α]₁ + ΣA + r[δ]₁
//	Bs  = [β]₂ + ΣB₂ + s[δ]₂
//	Bs₁ = [β]₁ + ΣB₁ + s[δ]₁
//	Krs = ΣK + [h]₁ + s·Ar + r·Bs₁ − rs[δ]₁
//
// where each Σ is the batch sum of the ones plus the tail MSM. The source
// then encodes the points (adding commitments, if any) and writes the files.
func (st *Steps) Assemble(ctx context.Context, j *Job) error {
	c := j.Circuit
	id := c.Curve()
	if !id.Valid() || assemblers[id] == nil {
		return fmt.Errorf("assemble: no group arithmetic for curve %s", id)
	}
	p, err := assemblers[id](c.Key, j)
	if err != nil {
		return err
	}
	j.Points = p

	out := st.Out
	if j.Out != nil {
		out = j.Out
	}
	em, err := c.Source.Emit(ctx, j, &j.Points, out)
	if err != nil {
		return err
	}
	j.Emitted = em
	return nil
}
