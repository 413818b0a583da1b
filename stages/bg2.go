package stages

import "context"

// BG2 is the G2 MSM of B's significant scalars, on the B_G2 device (the CPU
// by default, overlapping the device stages of the next job). After it the
// job holds nothing on the device.
func (st *Steps) BG2(ctx context.Context, j *Job) error {
	t, err := st.g2().MSMG2(ctx, j.Staged)
	if err != nil {
		return err
	}
	j.TailB2 = t
	st.Backend.Free(j.Staged)
	j.Staged = nil
	j.DeviceReservation.Close()
	st.putQuery(&j.Vec.QA)
	st.putQuery(&j.Vec.QB)
	st.putQuery(&j.Vec.QK)
	return nil
}
