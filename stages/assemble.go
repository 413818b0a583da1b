package stages

import (
	"context"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Assemble adds the batch sums and tails and randomises with fresh r, s from
// crypto/rand (fr.Element.SetRandom):
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
	var r, s fr.Element
	if _, err := r.SetRandom(); err != nil {
		return fmt.Errorf("draw r: %w", err)
	}
	if _, err := s.SetRandom(); err != nil {
		return fmt.Errorf("draw s: %w", err)
	}
	var rBig, sBig, rsBig big.Int
	r.BigInt(&rBig)
	s.BigInt(&sBig)
	var rs fr.Element
	rs.Mul(&r, &s)
	rs.BigInt(&rsBig)

	var delta1 bn254.G1Jac
	delta1.FromAffine(&c.Delta1)

	// Ar = [α]₁ + ΣA + r[δ]₁
	var ar, t bn254.G1Jac
	ar.Set(&j.Ones.A).AddAssign(&j.Tails.A).AddMixed(&c.Alpha1)
	t.ScalarMultiplication(&delta1, &rBig)
	ar.AddAssign(&t)

	// Bs₁ = [β]₁ + ΣB₁ + s[δ]₁
	var bs1 bn254.G1Jac
	bs1.Set(&j.Ones.B1).AddAssign(&j.Tails.B1).AddMixed(&c.Beta1)
	t.ScalarMultiplication(&delta1, &sBig)
	bs1.AddAssign(&t)

	// Bs = [β]₂ + ΣB₂ + s[δ]₂
	var bs, delta2 bn254.G2Jac
	delta2.FromAffine(&c.Delta2)
	bs.Set(&j.OnesB2).AddAssign(&j.TailB2).AddMixed(&c.Beta2)
	delta2.ScalarMultiplication(&delta2, &sBig)
	bs.AddAssign(&delta2)

	// Krs = ΣK + [h]₁ + s·Ar + r·Bs₁ − rs[δ]₁
	var krs bn254.G1Jac
	krs.Set(&j.Ones.K).AddAssign(&j.Tails.K).AddAssign(&j.H)
	t.ScalarMultiplication(&ar, &sBig)
	krs.AddAssign(&t)
	t.ScalarMultiplication(&bs1, &rBig)
	krs.AddAssign(&t)
	t.ScalarMultiplication(&delta1, &rsBig)
	krs.SubAssign(&t)

	j.Points.Ar.FromJacobian(&ar)
	j.Points.Bs.FromJacobian(&bs)
	j.Points.Krs.FromJacobian(&krs)

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
