package stages

import (
	"context"
	"reflect"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/proofdata"
)

// transfer (pin/transfer) classifies every scalar of the A, B and K queries as
// zero, one or significant, then stages the job's vectors on the device. W is
// dead afterwards.
func (e *Engine) transfer(ctx context.Context, j *Job) error {
	c := j.Circuit
	if b := e.cfg.Backend; b.ClassifiesOnTransfer() {
		// Straight into the pinned buffers the upload reads; B's query on
		// the host too when another backend does B_G2 (the CPU reads it).
		hostB := !e.g2OnDevice()
		if hostB {
			e.classify(&j.Vec.QB, j.W, c.Sel.B)
		}
		s, err := b.TransferClassify(ctx, c.Resident, &j.Vec, j.W, c.Sel.A, c.Sel.B, c.Sel.K, hostB)
		j.putW()
		j.W = nil
		j.releaseBytes(c.wireBytes())
		if err != nil {
			return err
		}
		e.staged(j, s)
		return nil
	}
	e.classify(&j.Vec.QA, j.W, c.Sel.A)
	e.classify(&j.Vec.QB, j.W, c.Sel.B)
	e.classify(&j.Vec.QK, j.W, c.Sel.K)
	j.putW()
	j.W = nil
	j.releaseBytes(c.wireBytes())

	s, err := e.cfg.Backend.Transfer(ctx, c.Resident, &j.Vec)
	if err != nil {
		return err
	}
	e.staged(j, s)
	return nil
}

// staged records where j's vectors went.
func (e *Engine) staged(j *Job, s *proofdata.Staged) {
	j.Staged = s
	j.Device = e.cfg.Backend.On(s)
}

// g2OnDevice: B_G2 runs on the G1 backend itself (--bg2-device cuda), which
// reads B's query from the device, so no host copy of it is needed.
func (e *Engine) g2OnDevice() bool {
	var b G2Backend = e.cfg.Backend
	// == on interfaces panics for a dynamic type that cannot be compared
	return reflect.TypeOf(b).Comparable() && b == e.cfg.G2
}

// classify splits the scalars w[sel[j]] of one query into zero, one and
// significant (proofdata.Classify), in buffers from the engine's pools that go back
// in putQuery.
func (e *Engine) classify(q *proofdata.Query, w []fr.Element, sel []uint32) {
	n := len(sel)
	idx := e.indexes.Get(n)
	proofdata.Classify(q, w, sel, e.bitmaps.Get((n+63)/64), idx, e.scalars.Get(n))
	if q.Dense {
		e.indexes.Put(idx)
	}
}

// putQuery hands a query's buffers back to the pools.
func (e *Engine) putQuery(q *proofdata.Query) {
	e.bitmaps.Put(q.Ones)
	e.indexes.Put(q.Idx)
	e.scalars.Put(q.Vals)
	*q = proofdata.Query{}
}
