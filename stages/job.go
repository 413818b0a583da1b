package stages

import (
	"context"
	"time"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stream"
)

// Job is one proof as it flows through the stages: each stage reads what the
// ones before it left and adds its own part. A stage drops (or hands back)
// each buffer as soon as no later stage needs it.
type Job struct {
	stream.Request
	Line int   // input line number, for messages
	Err  error // set before parse when the line itself was bad (malformed, duplicate id)
	// Owned: the job holds its id for as long as it is in flight (a second
	// job of the id meanwhile is a duplicate).
	Owned bool

	// Ctx, when set, ends this job alone, whatever the pipeline's context
	// (the library's Engine.Prove: its caller's context): every stage runs
	// under both, and a job whose Ctx is done fails at its next stage. (A
	// run's bound on its jobs' reads, once Job.Reads, is the pipeline's:
	// engine.Core.Pipeline.)
	Ctx context.Context
	// WitnessInput is the job's witness in hand instead of a path: the file
	// the request names (Witness or Wtns) as bytes (stream.Line.Witness: in
	// hand, or fetched as parse opens them), which the source reads with a
	// file's bounds and releases once decoded; or, with no file named, the
	// witness decoded (blob.Value: the library's Engine.Prove, a gnark
	// witness.Witness or a circom wire slice).
	WitnessInput *blob.Input
	// Out, when set, takes the job's files instead of the engine's
	// output (Memory: the library's Prove writes nothing to disk).
	Out Output
	// Verify asks the source to check the proof against the verifying key
	// even where it is set to skip that (gnarksrc.Options.SkipVerify): the
	// library's Prove returns only checked proofs.
	Verify bool

	// parse
	Circuit *Circuit
	Source  any // the source's own state: witness, commitments

	// Reservation is the memory governor's hold on this job's footprint,
	// from admission to synthesize until the job leaves; nil without one.
	Reservation *mem.Reservation
	// DeviceReservation is the hold on the device budget, from
	// pin/transfer until the job leaves; nil without one.
	DeviceReservation *mem.Reservation

	// synthesize: the full wire vector and the constraint evaluations
	// (Vec.A/B/C = a, b, c); pin/transfer adds the classified queries.
	W   []proofdata.Scalar
	Vec proofdata.Vectors

	// pin/transfer: the vectors as the device holds them, and which device
	// that is when the backend has several ("cuda:1")
	Staged *proofdata.Staged
	Device string

	// partial results, in the circuit's curve's own Jacobian types:
	// [h(τ)Z(τ)/δ]₁, the batch sums of ones and the tails
	H              proofdata.Point
	Ones, Tails    proofdata.G1Sums
	OnesB2, TailB2 proofdata.Point

	// assemble
	Points  Points
	Emitted Emitted

	// CPU is the process CPU time attributed to each stage's run (the
	// engine's CPU accounting).
	CPU map[string]time.Duration

	// Buffers, when set, lends W, a, b, c and the solver's flags (the
	// engine sets it at parse for a backend that ClassifiesOnTransfer; nil:
	// made fresh), and pooled is what this job took from it: the engine
	// hands W back after pin/transfer and a, b, c after NTT+MSM_H, the very
	// slices it lent, whatever the source left in j.W and j.Vec.
	Buffers Buffers
	pooled  struct{ w, a, b, c []proofdata.Scalar }
}

// TakeVectors sets j.W to wires elements and j.Vec.A, B, C to m elements
// each, taken from the engine's pools (made fresh without them); their
// contents are unspecified. The job owns them until the engine hands them
// back, so the source must not keep them past the job.
func (j *Job) TakeVectors(wires, m int) {
	if j.Buffers == nil {
		j.W = make([]proofdata.Scalar, wires)
		j.Vec.A, j.Vec.B, j.Vec.C = make([]proofdata.Scalar, m), make([]proofdata.Scalar, m), make([]proofdata.Scalar, m)
		return
	}
	p := j.Buffers
	j.putW()
	j.putABC()
	j.pooled.w, j.pooled.a, j.pooled.b, j.pooled.c = p.Scalars(wires), p.Scalars(m), p.Scalars(m), p.Scalars(m)
	j.W, j.Vec.A, j.Vec.B, j.Vec.C = j.pooled.w, j.pooled.a, j.pooled.b, j.pooled.c
}

// TakeFlags returns n flags of scratch from the engine's pools, contents
// unspecified; give them back with PutFlags once the solve is over.
func (j *Job) TakeFlags(n int) []bool {
	if j.Buffers == nil {
		return make([]bool, n)
	}
	return j.Buffers.Flags(n)
}

// PutFlags hands back flags from TakeFlags; they must not be used after.
func (j *Job) PutFlags(f []bool) {
	if j.Buffers != nil {
		j.Buffers.PutFlags(f)
	}
}

// putW hands back the W that TakeVectors gave (pin/transfer has classified it).
func (j *Job) putW() {
	if j.pooled.w != nil {
		j.Buffers.PutScalars(j.pooled.w)
		j.pooled.w, j.W = nil, nil
	}
}

// putABC hands back the a, b, c that TakeVectors gave (NTT+MSM_H is done
// with them).
func (j *Job) putABC() {
	for _, v := range []*[]proofdata.Scalar{&j.pooled.a, &j.pooled.b, &j.pooled.c} {
		if *v != nil {
			j.Buffers.PutScalars(*v)
			*v = nil
		}
	}
	j.Vec.A, j.Vec.B, j.Vec.C = nil, nil, nil
}
