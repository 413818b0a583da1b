package stages

import (
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
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
	W   []fr.Element
	Vec gpu.Vectors

	// pin/transfer: the vectors as the device holds them, and which device
	// that is when the backend has several ("cuda:1")
	Staged *gpu.Staged
	Device string

	// partial results: [h(τ)Z(τ)/δ]₁, the batch sums of ones and the tails
	H              bn254.G1Jac
	Ones, Tails    gpu.G1Sums
	OnesB2, TailB2 bn254.G2Jac

	// assemble
	Points  Points
	Emitted Emitted

	// CPU is the process CPU time attributed to each stage's run (cpuShare).
	CPU map[string]time.Duration
}

func (j *Job) addCPU(stage string, d time.Duration) {
	if j.CPU == nil {
		j.CPU = make(map[string]time.Duration, len(Names))
	}
	j.CPU[stage] += d
}
