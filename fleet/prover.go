package fleet

import (
	"context"
	"time"

	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Prover is what a worker needs from the proving engine (engine.Engine).
type Prover interface {
	// AddCircuit makes c resident; safe while Run is going.
	AddCircuit(c *stages.Circuit) error
	HasCircuit(name string) bool
	// Run proves the jobs from jobs and calls emit once per job, finished or
	// failed; a result's Proof and Public are the paths of files it wrote.
	// It returns when jobs is closed and every job has its result, or when
	// ctx ends.
	Run(ctx context.Context, jobs <-chan stream.Line, emit func(stream.Result) error) error
	// Capacity is how many jobs the pipeline can hold at once: the most a
	// worker pulls from the queue before results come back.
	Capacity() int
}

// Observer hears what a worker does, for metrics. Its methods must be quick
// and safe for concurrent use.
type Observer interface {
	// Result is every result line the prover emitted.
	Result(r stream.Result)
	// Job is each job answered, by outcome: "proved", "failed" (an error
	// result, terminated), "republished" (answered from stored outputs),
	// "requeued" (handed back to the queue: a store or network error, or
	// the worker stopping).
	Job(outcome string)
	// Waited is how long a job waited in the queue, from submit to this
	// worker taking it (its first delivery only).
	Waited(d time.Duration)
}
