package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Prover is what a worker needs from the proving engine (engine.Engine).
type Prover interface {
	// AddCircuit makes c resident; safe while Run is going.
	AddCircuit(c *stages.Circuit) error
	HasCircuit(name string) bool
	// Circuits are the resident circuits (a witness's size is bounded by
	// its circuit's wires before it is fetched).
	Circuits() []*stages.Circuit
	// HoldInput reserves bytes of job's input that are about to be held in
	// memory (a witness fetched from the store as parse opens it) with the
	// prover's memory budget, waiting for room, until the hold is closed (a
	// nil hold: the prover keeps no budget). An error is ctx's, the
	// prover's end, or a *mem.TooLargeError: the bytes can never fit.
	HoldInput(ctx context.Context, job string, bytes int64) (*mem.Reservation, error)
	// Run proves the jobs from jobs and calls emit once per job, finished or
	// failed. A job's witness comes in its line (Line.Witness: its bytes,
	// fetched from the store into memory when parse opens it), and its
	// outputs go to the line's Out: a result's Proof, Public and Calldata
	// are the names written there.
	// It returns when jobs is closed and every job has its result, or when
	// ctx ends.
	Run(ctx context.Context, jobs <-chan stream.Line, emit func(stream.Result) error) error
	// Capacity is how many jobs the pipeline can hold at once: the most a
	// worker holds before results come back (WorkerOptions.MaxInHand may
	// cap it further).
	Capacity() int
	// Intake is what the prover can start soon: the places of its first
	// stages (their workers and queues: engine.Engine's parse and
	// synthesize), and how many of the jobs sent to Run have gone through
	// them so far (moved on, or answered). A worker pulls only while the
	// jobs it sent, less those gone through, leave a place free: a job
	// the prover could not start for a while waits in the queue, where
	// any worker may take it, not in this worker's hand.
	Intake() (places int, through int64)
}

// Observer hears what a worker does, for metrics. Its methods must be quick
// and safe for concurrent use.
type Observer interface {
	// Result is every result line the prover emitted.
	Result(r stream.Result)
	// Job is each job answered, by outcome: "proved", "failed" (an error
	// result, terminated), "republished" (answered from stored outputs),
	// "requeued" (handed back to the queue: a store or network error, or
	// the worker stopping), "duplicate" (an answer the server already had,
	// dropped by its message id: a job or request answered twice).
	Job(outcome string)
	// Waited is how long a job waited in the queue, from submit to this
	// worker taking it (its first delivery only).
	Waited(d time.Duration)
}

// PerJobOutput is the engine-wide output (engine.Options.Output) of a
// worker's prover: a worker gives each job its own (stream.Line.Out) and
// stores what was written there, so a write here is from a job that came
// without one, refused rather than kept where nobody reads it. With it the
// engine opens no output directory: a worker writes nothing of its jobs to
// disk.
type PerJobOutput struct{}

// Write refuses.
func (PerJobOutput) Write(name string, _ []byte) (string, error) {
	return "", fmt.Errorf("%s: a worker's job stores its outputs in its own writer, and this one came without", name)
}
