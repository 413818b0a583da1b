package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
	"github.com/zkpipe/zkpipe/tracing"
)

// A request of partitions (stream.Request.Partitions) becomes k jobs at
// intake, "ID/0" … "ID/k−1", each a job like any other: admitted by the
// governor with its own reservation, overlapping the others in the stages,
// failing alone. The request holds its id in flight until its last
// partition is answered; then its one result line is written, ok only when
// every partition proved. A failed partition does not stop the others,
// whose proofs are still written, nor the stream.

// MaxPartitionsLimit bounds engine.Options.MaxPartitions: a request is
// answered only once its last partition is, so its first partitions' lines
// wait in memory for the rest.
const MaxPartitionsLimit = 4096

func (e *Engine) maxPartitions() int {
	if e.opts.MaxPartitions > 0 {
		return e.opts.MaxPartitions
	}
	return stream.DefaultMaxPartitions
}

// request collects a request's partitions' result lines and spans as they
// finish, in any order.
type request struct {
	id, circuit string

	mu     sync.Mutex
	lines  []stream.Result
	traces []tracing.Job
	left   int
}

// partOf is what the run's sink needs of a partition's job.
type partOf struct {
	req   *request
	index int
}

func newRequest(r stream.Request) *request {
	k := len(r.Partitions)
	return &request{id: r.ID, circuit: r.Circuit, lines: make([]stream.Result, k), traces: make([]tracing.Job, k), left: k}
}

// add records partition i's line and spans; for the last partition it
// returns the request's line and spans, and true.
func (r *request) add(i int, line stream.Result, trace tracing.Job) (stream.Result, tracing.Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines[i], r.traces[i] = line, trace
	r.left--
	if r.left > 0 {
		return stream.Result{}, tracing.Job{}, false
	}
	line = stream.RequestLine(r.id, r.circuit, r.lines)
	trace = tracing.Job{ID: r.id, Circuit: line.Circuit, Partitions: r.traces, ReservedBytes: line.ReservedBytes}
	if line.Error != "" {
		trace.Err = fmt.Errorf("%s", line.Error)
	}
	return line, trace, true
}

// takeRequest is take for a request of partitions (t.mu held): a request
// that cannot be proven as one (stream.Request.CheckPartitions) is one job
// that fails in parse, naming the problem; otherwise each partition enters
// stage 1 as a job of its own.
func (t *jobIntake) takeRequest(l stream.Line) bool {
	e := t.e
	req := l.Request
	var err error
	switch {
	case !l.IDChecked && !stream.ValidID(req.ID):
		err = fmt.Errorf("invalid id %q: want 1-128 of [A-Za-z0-9._-], not starting with . _ or -", req.ID)
	case l.Witness != nil:
		err = fmt.Errorf("a witness in hand (stream.Line.Witness) is one job's: a request of partitions names its witnesses in its partitions")
	default:
		if err = req.CheckPartitions(e.maxPartitions()); err != nil && len(req.Partitions) > e.maxPartitions() {
			err = fmt.Errorf("%w: engine.Options.MaxPartitions is %d", err, e.maxPartitions())
		}
	}
	if err == nil {
		if _, dup := t.inFlight.LoadOrStore(req.ID, true); dup {
			err = fmt.Errorf("%w %q: a job of that id is in flight", stream.ErrDuplicateID, req.ID)
		}
	}
	if err != nil {
		return t.enter(&stages.Job{Request: req, Line: l.Number, Err: err, WitnessInput: l.Witness, Out: l.Out})
	}
	if e.opts.SkipDone {
		if r, done := e.resumeRequest(t.reads, req); done {
			t.inFlight.Delete(req.ID)
			if t.hard.Err() == nil {
				t.send(r)
			}
			return true
		}
	}
	r := newRequest(req)
	for i := range req.Partitions {
		j := &stages.Job{Request: req.Partition(i), Line: l.Number, Out: l.Out}
		j.Err = e.checkWitness(j) // a witness this run writes fails its partition alone
		t.parts.Store(j, partOf{r, i})
		select {
		case t.in <- j:
			continue
		case <-t.done:
		}
		t.parts.Delete(j)
		if i == 0 {
			t.inFlight.Delete(req.ID)
			return false // not taken: no partition entered
		}
		// The request was taken: the partitions that never entered fail
		// here, so that it is still answered once those in flight are.
		for k := i; k < len(req.Partitions); k++ {
			pid := stream.PartitionID(req.ID, k)
			line := stream.Result{ID: pid, Circuit: req.Circuit, Stages: []stream.StageTime{},
				Error: fmt.Sprintf("job %s: intake stopped before this partition entered the pipeline", pid)}
			if line, trace, last := r.add(k, line, tracing.Job{ID: pid}); last {
				t.finishRequest(line, trace, true)
			}
		}
		return true
	}
	return true
}

// finishRequest writes a request's line once its last partition is in:
// from the run's sink as a single job's line is written, or from take
// (partitions that never entered) only while the run goes on.
func (t *jobIntake) finishRequest(line stream.Result, trace tracing.Job, fromTake bool) {
	t.inFlight.Delete(line.ID)
	t.e.tracer.Record(trace)
	t.e.notes.note(&line, t.e.shapeNow)
	if !fromTake || t.hard.Err() == nil {
		t.send(line)
	}
}

// resumeRequest answers a request of partitions from the outputs an
// earlier run left when every partition's proof verifies and binds to its
// own witness (see resume); otherwise the whole request is proven again.
func (e *Engine) resumeRequest(ctx context.Context, req stream.Request) (stream.Result, bool) {
	lines := make([]stream.Result, len(req.Partitions))
	for i := range req.Partitions {
		j := &stages.Job{Request: req.Partition(i)}
		r, ok := e.finished(ctx, j)
		if !ok {
			if i > 0 { // some were done: say why the rest are proven again
				fmt.Fprintf(e.log, "zkpipe: job %s: partition %d is not done; proving the request again\n", req.ID, i)
			}
			return stream.Result{}, false
		}
		lines[i] = r
	}
	e.resumed.Add(int64(len(lines)))
	line := stream.RequestLine(req.ID, req.Circuit, lines)
	line.Resumed = true
	return line, true
}
