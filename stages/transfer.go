package stages

import (
	"context"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/gpu"
)

// transfer (pin/transfer) classifies every scalar of the A, B and K queries as
// zero, one or significant, then stages the job's vectors on the device. W is
// dead afterwards.
func (e *Engine) transfer(ctx context.Context, j *Job) error {
	c := j.Circuit
	e.classify(&j.Vec.QA, j.W, c.Sel.A)
	e.classify(&j.Vec.QB, j.W, c.Sel.B)
	e.classify(&j.Vec.QK, j.W, c.Sel.K)
	j.W = nil
	j.releaseBytes(c.wireBytes())

	s, err := e.cfg.Backend.Transfer(ctx, c.Resident, &j.Vec)
	if err != nil {
		return err
	}
	j.Staged = s
	return nil
}

// classify splits the scalars w[sel[j]] of one query: a bitmap of the ones,
// and the significant rest compacted with their indexes. When nothing is zero
// or one the query is Dense and the tail MSM runs on the bases as they are.
// Buffers come from the engine's pools and go back in release.
func (e *Engine) classify(q *gpu.Query, w []fr.Element, sel []uint32) {
	n := len(sel)
	*q = gpu.Query{Len: n}
	q.Ones = e.bitmaps.Get((n + 63) / 64)
	clear(q.Ones)
	q.Idx = e.indexes.Get(n)
	q.Vals = e.scalars.Get(n)
	k := 0
	for j, wire := range sel {
		s := &w[wire]
		switch {
		case s.IsZero():
		case s.IsOne():
			q.Ones[j>>6] |= 1 << (uint(j) & 63)
			q.NumOnes++
		default:
			q.Idx[k] = uint32(j)
			q.Vals[k] = *s
			k++
		}
	}
	q.Idx, q.Vals = q.Idx[:k], q.Vals[:k]
	if k == n {
		e.indexes.Put(q.Idx)
		q.Idx, q.Dense = nil, true
	}
}

// putQuery hands a query's buffers back to the pools.
func (e *Engine) putQuery(q *gpu.Query) {
	e.bitmaps.Put(q.Ones)
	e.indexes.Put(q.Idx)
	e.scalars.Put(q.Vals)
	*q = gpu.Query{}
}
