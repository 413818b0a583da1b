package stages

import (
	"reflect"
	"runtime"

	"github.com/zkpipe/zkpipe/proofdata"
)

// Steps are the stages of a proof bound to what they run on: each method
// (Parse … Assemble) is one stage over one job, and package engine
// assembles them into a pipeline. Safe for concurrent use by the stages'
// workers.
type Steps struct {
	Backend Backend   // the G1 stages' device
	G2      G2Backend // B_G2's device; nil means Backend
	Out     Output    // where proofs go, unless a job brings its own (Job.Out)
	// Buffers lends the classified queries' bitmaps, indexes and scalars
	// (pin/transfer) and takes them back when the job is done with them;
	// nil: made fresh.
	Buffers Buffers
}

// Buffers lends the large buffers of a job and takes them back, so that a
// stream of proofs of one circuit reuses the same pages instead of faulting
// fresh ones in (the engine keeps them in mem.Pools). Contents of a lent
// buffer are unspecified; a buffer given back must not be used after.
// Putting nil is a no-op.
type Buffers interface {
	Scalars(n int) []proofdata.Scalar
	PutScalars([]proofdata.Scalar)
	Flags(n int) []bool
	PutFlags([]bool)
	Bitmap(words int) []uint64
	PutBitmap([]uint64)
	Indexes(n int) []uint32
	PutIndexes([]uint32)
}

func (s *Steps) g2() G2Backend {
	if s.G2 == nil {
		return s.Backend
	}
	return s.G2
}

// g2OnDevice: B_G2 runs on the G1 backend itself (--bg2-device cuda), which
// reads B's query from the device, so no host copy of it is needed.
func (s *Steps) g2OnDevice() bool {
	var b G2Backend = s.Backend
	g2 := s.g2()
	// == on interfaces panics for a dynamic type that cannot be compared
	return reflect.TypeOf(b).Comparable() && reflect.TypeOf(g2).Comparable() && b == g2
}

// HostKey is what the stages read of k's host copy once it is resident:
// the G1 backend's parts, and B_G2's where that runs elsewhere.
func (s *Steps) HostKey(k *proofdata.Key) proofdata.KeyParts {
	keep := s.Backend.HostKey(k)
	if !s.g2OnDevice() {
		keep |= s.g2().HostKeyG2(k)
	}
	return keep
}

// HostUse is what a job of these stages holds on the host (Circuit.Host).
func (s *Steps) HostUse() HostUse {
	dev := s.Backend.StagesOnDevice()
	return HostUse{DeviceG1: dev, DeviceG2: dev && s.g2OnDevice()}
}

// classify splits the scalars w[sel[j]] of one query into zero, one (the
// curve's) and significant (proofdata.Classify), in buffers from s.Buffers
// that go back in putQuery. A big query is split over up to GOMAXPROCS
// goroutines (proofdata.ClassifyWith): one proof of a wide circuit is not
// one core's work.
func (s *Steps) classify(q *proofdata.Query, one proofdata.Scalar, w []proofdata.Scalar, sel []uint32) {
	n := len(sel)
	workers := runtime.GOMAXPROCS(0)
	if s.Buffers == nil {
		proofdata.ClassifyWith(q, one, w, sel, make([]uint64, (n+63)/64), make([]uint32, n), make([]proofdata.Scalar, n), workers)
		return
	}
	idx := s.Buffers.Indexes(n)
	proofdata.ClassifyWith(q, one, w, sel, s.Buffers.Bitmap((n+63)/64), idx, s.Buffers.Scalars(n), workers)
	if q.Dense {
		s.Buffers.PutIndexes(idx)
	}
}

// putQuery hands a query's buffers back.
func (s *Steps) putQuery(q *proofdata.Query) {
	if s.Buffers != nil {
		s.Buffers.PutBitmap(q.Ones)
		s.Buffers.PutIndexes(q.Idx)
		s.Buffers.PutScalars(q.Vals)
	}
	*q = proofdata.Query{}
}

// Release hands back whatever j still holds (its device buffers, its
// pooled vectors and queries, its memory reservations); safe to call more
// than once, and for a job that never reached a stage.
func (s *Steps) Release(j *Job) {
	s.putQuery(&j.Vec.QA)
	s.putQuery(&j.Vec.QB)
	s.putQuery(&j.Vec.QK)
	if j.Staged != nil {
		s.Backend.Free(j.Staged)
		j.Staged = nil
	}
	j.DeviceReservation.Close()
	j.putW()
	j.putABC()
	j.W, j.Vec.A, j.Vec.B, j.Vec.C, j.Source = nil, nil, nil, nil, nil
	j.Reservation.Close()
}

// releaseBytes tells the governor a stage has freed about n bytes.
func (j *Job) releaseBytes(n int64) {
	j.Reservation.Release(n)
}
