package stages

import "context"

// bG2 is the G2 MSM of B's significant scalars, on the B_G2 device (the CPU
// by default, overlapping the device stages of the next job). After it the
// job holds nothing on the device.
func (e *Engine) bG2(ctx context.Context, j *Job) error {
	t, err := e.cfg.G2.MSMG2(ctx, j.Staged)
	if err != nil {
		return err
	}
	j.TailB2 = t
	e.cfg.Backend.Free(j.Staged)
	j.Staged = nil
	j.DeviceReservation.Close()
	e.putQuery(&j.Vec.QA)
	e.putQuery(&j.Vec.QB)
	e.putQuery(&j.Vec.QK)
	return nil
}
