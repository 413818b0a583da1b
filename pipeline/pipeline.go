package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// Stage is one step of the pipeline: Workers goroutines reading from a channel
// of capacity Queue.
type Stage[J any] struct {
	Name    string
	Workers int // goroutines running Run at the start; at least 1
	Queue   int // capacity of the channel feeding this stage; 0 means unbuffered
	// MaxWorkers bounds SetWorkers; 0 means Workers (the stage keeps its size).
	MaxWorkers int

	// Admit, if set, is called by a worker before Run and may block (the memory
	// governor reserves a job's footprint here). Its wait is counted as queue
	// time, its error fails the job like Run's.
	Admit func(ctx context.Context, job J) error

	// Run does this stage's work on one job. It must not keep job after it
	// returns; an error ends the job, which then skips the later stages.
	Run func(ctx context.Context, job J, worker int) error

	// Batch > 1 lets a worker that takes a job also take up to Batch−1
	// more that are already waiting in the stage's queue — never waiting
	// for one — and run them together through RunBatch (cross-proof
	// batching of device work). Each job keeps its own timing, error and
	// place in the stream. A batching stage has no Admit: a job waiting for
	// admission must not hold the jobs batched before it.
	Batch int
	// RunBatch does the stage's work on jobs (1 to Batch of them) and
	// returns one error per job (nil for a job that succeeded); a panic
	// fails every job of the batch. Used when Batch > 1.
	RunBatch func(ctx context.Context, jobs []J, worker int) []error
}

// Timing is when a job reached a stage, when a worker took it, and when it left.
type Timing struct {
	Stage    string
	Worker   int
	Queued   time.Time // the previous stage finished (or the source emitted it)
	Started  time.Time // a worker began Run (after Admit)
	Finished time.Time
}

// Wait is how long the job waited for this stage: queue plus admission.
func (t Timing) Wait() time.Duration { return t.Started.Sub(t.Queued) }

// Busy is how long the stage worked on the job.
func (t Timing) Busy() time.Duration { return t.Finished.Sub(t.Started) }

// Result is a job as it leaves the pipeline, finished or failed.
type Result[J any] struct {
	Job     J
	Timings []Timing // one per stage the job reached, in stage order
	Err     error    // nil when every stage succeeded
	Stage   string   // the stage that failed, when Err != nil
}

// StageCount is a snapshot of one stage's occupancy.
type StageCount struct {
	Name    string
	Queued  int // jobs waiting in the stage's channel or in admission
	Running int // jobs in Run (or RunBatch)
	Busy    int // workers in Run or RunBatch: Running, less the batches' extra jobs
	Workers int // workers the stage has (SetWorkers); extra ones leave after their job
}

// Pipeline runs jobs through its stages. Build one with New, run it once.
type Pipeline[J any] struct {
	stages  []Stage[J]
	queued  []atomic.Int64
	running []atomic.Int64
	busy    []atomic.Int64
	// through[i]: jobs that went through stages 0..i: moved on from stage
	// i, reached the sink from it, or failed at it or before
	through []atomic.Int64
	pools   []*pool
	used    atomic.Bool

	// Drop, if set, receives each job that Run took from src but that
	// cancellation kept from reaching sink (queued between stages, waiting
	// in Admit, or in a Run that returned ctx's error), so that whatever
	// the job holds can be released. Run calls it once per such job from
	// its own goroutine, after every goroutine it started has exited and
	// before it returns. Set it before Run.
	Drop func(J)

	droppedMu sync.Mutex
	dropped   []*envelope[J]
}

// New checks the stages and returns a pipeline over them. A stage with no Run,
// no name or fewer than one worker is a programmer error and panics.
func New[J any](stages ...Stage[J]) *Pipeline[J] {
	if len(stages) == 0 {
		panic("pipeline: no stages")
	}
	for i, s := range stages {
		if s.Name == "" || s.Run == nil || s.Workers < 1 || s.Queue < 0 || (s.MaxWorkers != 0 && s.MaxWorkers < s.Workers) {
			panic(fmt.Sprintf("pipeline: stage %d (%q) needs a name, a Run, Workers ≥ 1, Queue ≥ 0 and MaxWorkers 0 or ≥ Workers", i, s.Name))
		}
		if s.Batch > 1 && (s.RunBatch == nil || s.Admit != nil) {
			panic(fmt.Sprintf("pipeline: stage %d (%q) batches: it needs a RunBatch and no Admit", i, s.Name))
		}
	}
	p := &Pipeline[J]{
		stages:  stages,
		queued:  make([]atomic.Int64, len(stages)),
		running: make([]atomic.Int64, len(stages)),
		busy:    make([]atomic.Int64, len(stages)),
		through: make([]atomic.Int64, len(stages)),
	}
	for _, s := range stages {
		p.pools = append(p.pools, newPool(s.Workers, max(s.MaxWorkers, s.Workers)))
	}
	return p
}

// SetWorkers gives the named stage n workers, from 1 to its MaxWorkers;
// safe from any goroutine, before or while Run goes. New workers start at
// once; when n is fewer, the extra workers leave as they finish their
// current job (none is interrupted). A stage whose input has closed keeps
// the workers it has.
func (p *Pipeline[J]) SetWorkers(name string, n int) error {
	for i, s := range p.stages {
		if s.Name == name {
			return p.pools[i].set(n, s.Name)
		}
	}
	return fmt.Errorf("pipeline: no stage %q", name)
}

// Snapshot reports how many jobs wait in and run in each stage. Safe to call
// from any goroutine while Run is going.
func (p *Pipeline[J]) Snapshot() []StageCount {
	out := make([]StageCount, len(p.stages))
	for i, s := range p.stages {
		out[i] = StageCount{Name: s.Name, Queued: int(p.queued[i].Load()), Running: int(p.running[i].Load()), Busy: int(p.busy[i].Load()), Workers: p.pools[i].wanted()}
	}
	return out
}

// Through reports how many jobs have gone through the named stage and the
// stages before it: moved on from it, reached the sink from it, or failed
// at it or earlier. The jobs taken from Run's src less Through(name) are
// in those stages or on their way into the first (a feeder that keeps
// them within those stages' workers and queues hands the pipeline only
// jobs it starts soon). Safe from any goroutine; 0 for a stage it does not
// have. Jobs that cancellation drops are not counted.
func (p *Pipeline[J]) Through(name string) int64 {
	for i, s := range p.stages {
		if s.Name == name {
			return p.through[i].Load()
		}
	}
	return 0
}

// envelope carries a job and its record between stages.
type envelope[J any] struct {
	job     J
	timings []Timing
	queued  time.Time
}

// Run feeds every job from src through the stages and calls sink once per job,
// from a single goroutine, as each finishes or fails; sink must not block for
// long, since it holds back the jobs behind it. Run returns when src is closed
// and every job has reached sink (nil), or when ctx is cancelled (ctx.Err()),
// after every goroutine it started has exited. Jobs still inside the pipeline
// at cancellation do not reach sink: they go to Drop, when set.
func (p *Pipeline[J]) Run(ctx context.Context, src <-chan J, sink func(Result[J])) error {
	if p.used.Swap(true) {
		panic("pipeline: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Failed jobs go straight to the sink rather than through the later
	// stages' queues, so their result line appears at once.
	results := make(chan Result[J])
	var all sync.WaitGroup

	// Source: wrap each job in an envelope, stamping when it entered stage 0.
	first := make(chan *envelope[J], p.stages[0].Queue)
	all.Add(1)
	go func() {
		defer all.Done()
		defer close(first)
		for {
			var job J
			var ok bool
			select {
			case job, ok = <-src:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
			env := &envelope[J]{job: job, timings: make([]Timing, 0, len(p.stages)), queued: time.Now()}
			p.queued[0].Add(1)
			select {
			case first <- env:
			case <-ctx.Done():
				p.queued[0].Add(-1)
				p.drop(env)
				return
			}
		}
	}()

	// Stages: each reads its channel with Workers goroutines and writes the
	// next stage's channel (or, for the last, the results).
	var in <-chan *envelope[J] = first
	queues := []chan *envelope[J]{first}
	for i := range p.stages {
		var out chan *envelope[J]
		if i+1 < len(p.stages) {
			out = make(chan *envelope[J], p.stages[i+1].Queue)
			queues = append(queues, out)
		}
		stageIn := in // in is reassigned below
		pl := p.pools[i]
		pl.start(func(w int) { p.work(ctx, i, w, stageIn, out, results) })
		all.Add(1)
		go func(out chan *envelope[J]) {
			defer all.Done()
			pl.wait() // every worker, however many came and went, has exited
			if out != nil {
				close(out)
			}
		}(out)
		in = out
	}

	// All goroutines done ⇒ nothing more can reach results.
	go func() {
		all.Wait()
		close(results)
	}()
	for r := range results {
		sink(r)
	}
	// Every goroutine has exited and every queue is closed: what is left in
	// the queues was dropped by cancellation.
	for _, q := range queues {
		for env := range q {
			p.drop(env)
		}
	}
	if p.Drop != nil {
		for _, env := range p.dropped {
			p.Drop(env.job)
		}
	}
	p.dropped = nil
	return ctx.Err()
}

// drop records a job that cancellation keeps from the sink.
func (p *Pipeline[J]) drop(env *envelope[J]) {
	p.droppedMu.Lock()
	p.dropped = append(p.dropped, env)
	p.droppedMu.Unlock()
}

// work is one worker of stage i.
func (p *Pipeline[J]) work(ctx context.Context, i, w int, in <-chan *envelope[J], out chan<- *envelope[J], results chan<- Result[J]) {
	s := &p.stages[i]
	// A job leaves this worker on out (next stage) or results (done or failed).
	emit := func(env *envelope[J], err error) bool {
		if err == nil && out != nil {
			env.queued = time.Now()
			if i+1 < len(p.stages) {
				p.queued[i+1].Add(1)
			}
			select {
			case out <- env:
				p.through[i].Add(1)
				return true
			case <-ctx.Done():
				p.queued[i+1].Add(-1)
				p.drop(env)
				return false
			}
		}
		// leaving the pipeline: through this stage and (failed) every
		// later one
		for k := i; k < len(p.stages); k++ {
			p.through[k].Add(1)
		}
		r := Result[J]{Job: env.job, Timings: env.timings, Err: err}
		if err != nil {
			r.Stage = s.Name
		}
		select {
		case results <- r:
			return true
		case <-ctx.Done():
			p.drop(env)
			return false
		}
	}
	pl := p.pools[i]
	for {
		fewer, leave := pl.stay(w)
		if leave {
			return // SetWorkers asked for fewer
		}
		select {
		case <-fewer:
			continue // asked for fewer since stay: look before taking a job
		default:
		}
		var env *envelope[J]
		var ok bool
		select {
		case env, ok = <-in:
			if !ok {
				pl.end(w)
				return
			}
		case <-ctx.Done():
			pl.end(w)
			return
		case <-fewer:
			continue // look again whether this worker is one too many
		}
		if s.Batch > 1 {
			if !p.runBatch(ctx, i, w, env, in, emit) {
				pl.end(w)
				return
			}
			continue
		}
		t := Timing{Stage: s.Name, Worker: w, Queued: env.queued}
		var err error
		if s.Admit != nil {
			err = protect(func() error { return s.Admit(ctx, env.job) })
		}
		p.queued[i].Add(-1)
		t.Started = time.Now()
		if err == nil {
			p.running[i].Add(1)
			p.busy[i].Add(1)
			err = protect(func() error { return s.Run(ctx, env.job, w) })
			p.busy[i].Add(-1)
			p.running[i].Add(-1)
		}
		t.Finished = time.Now()
		env.timings = append(env.timings, t)
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			p.drop(env) // cancelled: the job goes to Drop, as Run documents
			pl.end(w)
			return
		}
		if !emit(env, err) {
			pl.end(w)
			return
		}
	}
}

// runBatch runs first and the jobs already waiting behind it in in (up to
// the stage's Batch in all) through RunBatch, then sends each on with its
// own error. It reports false when cancellation stopped the worker: then
// every job of the batch not yet sent on has gone to Drop.
func (p *Pipeline[J]) runBatch(ctx context.Context, i, w int, first *envelope[J], in <-chan *envelope[J], emit func(*envelope[J], error) bool) bool {
	s := &p.stages[i]
	batch := []*envelope[J]{first}
more:
	for len(batch) < s.Batch {
		select {
		case env, ok := <-in:
			if !ok {
				break more // the input closed: the next receive ends the worker
			}
			batch = append(batch, env)
		default:
			break more // nothing waiting: never wait for more
		}
	}
	p.queued[i].Add(-int64(len(batch)))
	started := time.Now()
	jobs := make([]J, len(batch))
	for k, env := range batch {
		jobs[k] = env.job
	}
	p.running[i].Add(int64(len(batch)))
	p.busy[i].Add(1)
	var errs []error
	err := protect(func() error {
		errs = s.RunBatch(ctx, jobs, w)
		if len(errs) != len(jobs) {
			return fmt.Errorf("pipeline: stage %s: RunBatch returned %d errors for %d jobs", s.Name, len(errs), len(jobs))
		}
		return nil
	})
	p.busy[i].Add(-1)
	p.running[i].Add(-int64(len(batch)))
	finished := time.Now()
	stopped := false
	for k, env := range batch {
		env.timings = append(env.timings, Timing{Stage: s.Name, Worker: w, Queued: env.queued, Started: started, Finished: finished})
		jerr := err
		if jerr == nil {
			jerr = errs[k]
		}
		switch {
		case stopped:
			p.drop(env)
		case jerr != nil && ctx.Err() != nil && errors.Is(jerr, ctx.Err()):
			p.drop(env) // cancelled: the job goes to Drop, as Run documents
			stopped = true
		case !emit(env, jerr):
			stopped = true
		}
	}
	return !stopped
}

// protect runs f, turning a panic into a *panics.ErrRecovered (conc) that
// keeps the panic's value and stack and unwraps to the value when it was an
// error.
func protect(f func() error) (err error) {
	if r := panics.Try(func() { err = f() }); r != nil {
		return r.AsError()
	}
	return err
}
