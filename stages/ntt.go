package stages

import "context"

// MSMH is NTT+MSM_H: h = (a·b − c)/Z by inverse NTT, coset NTT, pointwise
// product and inverse coset NTT (gnark keeps h bit-reversed, n−1 terms, to
// match pk.G1.Z), then the MSM of h against the H query. The backend does
// both; a, b and c are dead afterwards.
func (st *Steps) MSMH(ctx context.Context, j *Job) error {
	h, err := st.Backend.MSMH(ctx, j.Staged)
	if err != nil {
		return err
	}
	j.H = h
	j.putABC()
	j.releaseBytes(j.Circuit.nttBytes())
	return nil
}
