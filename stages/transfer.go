package stages

import (
	"context"

	"github.com/zkpipe/zkpipe/proofdata"
)

// Transfer (pin/transfer) classifies every scalar of the A, B and K queries as
// zero, one or significant, then stages the job's vectors on the device. W is
// dead afterwards, and so are a, b, c on a backend that holds them on its
// device (Circuit.Host.DeviceG1).
func (st *Steps) Transfer(ctx context.Context, j *Job) error {
	c := j.Circuit
	one := proofdata.One(c.Key.Curve)
	if b := st.Backend; b.ClassifiesOnTransfer() {
		// Straight into the pinned buffers the upload reads; B's query on
		// the host too when another backend does B_G2 (the CPU reads it).
		hostB := !st.g2OnDevice()
		if hostB {
			st.classify(&j.Vec.QB, one, j.W, c.Sel.B)
		}
		s, err := b.TransferClassify(ctx, c.Resident, &j.Vec, j.W, c.Sel.A, c.Sel.B, c.Sel.K, hostB)
		j.putW()
		j.W = nil
		if c.Host.DeviceG1 && b.StagesOnDevice() {
			// on the device now (Backend.StagesOnDevice): the host's
			// copies go back to the pool, for the next job's synthesize
			j.putABC()
		}
		j.releaseBytes(c.wireBytes())
		if err != nil {
			return err
		}
		st.staged(j, s)
		return nil
	}
	st.classify(&j.Vec.QA, one, j.W, c.Sel.A)
	st.classify(&j.Vec.QB, one, j.W, c.Sel.B)
	st.classify(&j.Vec.QK, one, j.W, c.Sel.K)
	j.putW()
	j.W = nil
	j.releaseBytes(c.wireBytes())

	s, err := st.Backend.Transfer(ctx, c.Resident, &j.Vec)
	if err != nil {
		return err
	}
	st.staged(j, s)
	return nil
}

// staged records where j's vectors went.
func (st *Steps) staged(j *Job, s *proofdata.Staged) {
	j.Staged = s
	j.Device = st.Backend.On(s)
}
