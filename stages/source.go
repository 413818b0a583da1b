package stages

import (
	"context"

	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stream"
)

// Source is what differs between kinds of circuit (gnark's files, circom's
// zkey): how a job's witness is read and solved, how its proof is written
// and checked again. From pin/transfer to the proof's points, every circuit
// shares the same stages. It is the whole contract: what a source can or
// cannot do is a method that says so, never an interface found by a type
// assertion, and nothing outside the sources downcasts to one.
type Source interface {
	// Kind names the source ("gnark", "circom") for results and traces.
	Kind() string
	// Parse reads or generates job's witness and checks its sizes, keeping
	// what Synthesize needs in job.Source.
	Parse(ctx context.Context, job *Job) error
	// Synthesize fills job.W (the full wire vector) and job.Vec.A, B, C (the
	// constraint evaluations). An unsatisfied witness is an error.
	Synthesize(ctx context.Context, job *Job) error
	// Emit writes the proof of job, whose points are p, through out, and
	// returns what its result line reports.
	Emit(ctx context.Context, job *Job, p *Points, out Output) (Emitted, error)
	// HostBytes estimates the host memory the source keeps for its circuit
	// while it is loaded, beside the circuit's Key and selections: gnark's
	// R1CS, circom's coefficients and r1cs. The governor charges it with
	// the key (engine: at start, and for a circuit added while running),
	// since jobs' footprints do not hold it: bits 2^26's R1CS is ~5 GiB.
	HostBytes() int64
	// SerialSynthesis says whether Synthesize runs on one core a job
	// (circom's: the wasm witness calculator, then a = A·W and b = B·W),
	// unlike gnark's solver, which spreads a job over cores. The auto shape
	// gives synthesize more workers when every circuit's source does.
	SerialSynthesis() bool
	// PublicInputs are those a proof of req must have, when they are known
	// before proving (known false: only once proven, as for circom input
	// jobs): a verified proof of other inputs is not the job's (a resume
	// checks a stored proof's against them).
	PublicInputs(ctx context.Context, req stream.Request) (inputs []string, known bool, err error)
	// Verifier checks a job's stored outputs against the circuit's
	// verifying key, and names them.
	Verifier() Verifier
	// Close releases what the source holds besides memory (circom's
	// witness calculator), once its circuit is done with; nil when there is
	// nothing.
	Close(ctx context.Context) error
}

// Points are the proof's group elements before encoding: A = Ar, B = Bs,
// C = Krs, affine, in the circuit's curve's own types (*bn254.G1Affine …).
type Points struct {
	Ar, Krs proofdata.Point
	Bs      proofdata.Point
}

// Emitted is what a written proof reports on its result line.
type Emitted struct {
	Proof, Public string   // paths
	Calldata      string   // path of the proof's Solidity calldata, where asked for
	PublicInputs  []string // decimal
	// Value is the proof itself, as the source's library writes it (gnark:
	// *groth16bn254.Proof or the circuit's curve's), for callers that want
	// the value, not files.
	Value any
}
