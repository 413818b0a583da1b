package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
	"github.com/zkpipe/zkpipe/tracing"
)

// Engine proves streams of jobs for a set of circuits: the backend, the
// memory governor, the output directory and tracing, opened once by New and
// released by Close.
type Engine struct {
	opts Options
	log  io.Writer

	machine mem.Machine
	gov     *mem.Governor
	cudas   []*gpu.CUDA // the GPUs the engine opened
	multi   *gpu.Multi  // over them, when there are several
	backend stages.Backend
	g2      stages.G2Backend
	pinned  *mem.PinnedPool
	holds   []*mem.Reservation
	tracer  *tracing.Tracer
	out     *OutDir
	core    *Core // the circuits, pools and pipeline assembly

	owned      []*stages.Circuit // closed with the engine
	autoStages map[string]bool   // stages whose shape autoShape chose
	cores      int               // the stages' cores (Options.Cores)
	maxWorkers map[string]int    // what the shape controller may give each stage; nil: fixed
	notes      shapeNotes

	running                 atomic.Bool // a Run is going: Runs follow one another, never overlap
	proved, failed, resumed atomic.Int64

	mu     sync.Mutex // guards pipe and t0 once Run starts, closed, stopRun
	pipe   *pipeline.Pipeline[*stages.Job]
	t0     time.Time
	status statusTicker

	// Close sets closed, cancels a Run in progress (stopRun) and waits for
	// the calls that entered before it (busy) before it releases anything:
	// a metrics scrape may come while the engine shuts down.
	closed  bool
	stopRun context.CancelFunc
	provers *provers // Prove's pipeline, from the first Prove to Close
	busy    sync.WaitGroup

	goRT *goRuntime // what New set in the Go runtime, for Close to restore
}

// ErrClosed is returned by the methods of an engine that has been closed.
var ErrClosed = errors.New("engine closed")

// enter registers a call that uses the engine's resources, and reports
// false once Close has begun; a true enter must be paired with exit.
func (e *Engine) enter() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.busy.Add(1)
	return true
}

func (e *Engine) exit() { e.busy.Done() }

// New opens what opts describe and makes the circuits' keys resident. The
// engine owns the circuits from then on: Close releases them, and so does a
// failed New.
func New(ctx context.Context, opts Options, circuits ...*stages.Circuit) (_ *Engine, err error) {
	e := &Engine{opts: opts, log: opts.Log, owned: circuits}
	if e.log == nil {
		e.log = os.Stderr
	}
	e.status.out = e.log
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if err := e.opts.check(); err != nil {
		return nil, err
	}
	if e.opts.Out == "" && e.opts.Output == nil {
		e.opts.Out = "out"
	}

	// The budgets first: a typo in one fails before a GPU is opened.
	e.machine = mem.ReadMachine()
	gcfg, err := governorConfig(opts.Memory, e.machine)
	if err != nil {
		return nil, err
	}
	if e.backend, e.g2, err = e.openBackends(); err != nil {
		return nil, err
	}
	if _, total := e.backend.DeviceMemory(); total > 0 {
		gcfg.Device = e.backend // device memory becomes a budget beside RSS and pinned
	}
	e.goRT = setGoRuntime(opts.Memory, &gcfg)
	e.gov = mem.NewGovernor(gcfg)
	if n := e.backend.PinnedBytes(); n > 0 {
		h, err := e.gov.ChargePinned(int64(n))
		if err != nil {
			return nil, fmt.Errorf("%s backend: %w", e.backend.Name(), err)
		}
		e.holds = append(e.holds, h)
	}
	if e.pinned, err = startPinned(e.gov, e.backend); err != nil {
		return nil, err
	}
	output, err := e.openOutput()
	if err != nil {
		return nil, err
	}
	// B_G2 is on a GPU only where openBackends gave it the G1 stages' GPU
	bg2OnCPU := len(e.cudas) == 0 || e.g2 != stages.G2Backend(e.backend)
	e.cores = opts.Cores
	if e.cores == 0 {
		e.cores = runtime.NumCPU()
	}
	e.opts.Shapes, e.autoStages = autoShape(opts.Shapes, e.cores, len(e.cudas) > 0, !bg2OnCPU, serialSynthesis(circuits))
	batchQueue(e.opts.Shapes, e.autoStages, opts.TailMSMBatch)
	if e.multi != nil {
		perDevice(e.opts.Shapes, len(e.cudas), !bg2OnCPU)
	}
	e.maxWorkers = growable(&e.opts, e.autoStages, e.cores)
	e.core, err = NewCore(CoreConfig{Shapes: e.opts.Shapes, MaxWorkers: e.maxWorkers,
		Backend: e.backend, G2: e.g2, Governor: e.gov, Out: output, TailBatch: opts.TailMSMBatch, HostFault: hostFault,
		KeepHostKeys: opts.Memory.KeepHostKeys}, circuits...)
	if err != nil {
		return nil, err
	}
	e.holds = append(e.holds, chargeResident(e.gov, circuits))
	e.warnTooLarge(circuits)
	if e.opts.Memory.Status > 0 {
		fmt.Fprintln(e.log, startLine(e.gov.Stats(), e.machine, circuits))
		fmt.Fprintln(e.log, shapeLine(&e.opts, e.autoStages))
	}

	tc := opts.Tracing
	dev, g2 := e.backend.Name(), e.g2.Name()
	tc.Backend = dev
	tc.Devices = map[string]string{stages.Transfer: dev, stages.MSMH: dev, stages.BatchAdd: dev, stages.TailMSM: dev, stages.BG2: g2}
	if e.tracer, err = tracing.Start(ctx, tc); err != nil {
		return nil, err
	}
	return e, nil
}

// AddCircuit makes c's keys resident and lets jobs name it; safe while Run
// is going (a worker of a fleet loads circuits as their first job comes).
// The engine owns c from then on; after Close it is closed at once and
// ErrClosed returned.
func (e *Engine) AddCircuit(c *stages.Circuit) error {
	if !e.enter() {
		closeCircuit(c)
		return fmt.Errorf("circuit %s: %w", c.Name, ErrClosed)
	}
	defer e.exit()
	if err := e.core.AddCircuit(c); err != nil {
		closeCircuit(c)
		return err
	}
	e.mu.Lock()
	e.owned = append(e.owned, c)
	e.holds = append(e.holds, e.gov.Charge(residentBytes(c)))
	e.mu.Unlock()
	if e.opts.Memory.Status > 0 {
		fmt.Fprintf(e.log, "zkpipe: circuit %s loaded (%d constraints)\n", c.Name, c.Constraints)
	}
	e.warnTooLarge([]*stages.Circuit{c})
	return nil
}

// HasCircuit tells whether a circuit of that name is loaded (none is,
// after Close).
func (e *Engine) HasCircuit(name string) bool {
	if !e.enter() {
		return false
	}
	defer e.exit()
	_, err := e.core.Circuit(name)
	return err == nil && name != ""
}

// Circuits lists the loaded circuits (none, after Close).
func (e *Engine) Circuits() []*stages.Circuit {
	if !e.enter() {
		return nil
	}
	defer e.exit()
	return e.core.Circuits()
}

// Capacity is how many jobs the pipeline holds at once: each stage's
// workers and queue. A feeder that keeps no more than this many jobs in
// flight never waits on the pipeline for long.
func (e *Engine) Capacity() int {
	n := 0
	for _, name := range stages.Names {
		s := e.opts.shape(name)
		n += s.Workers + s.Queue
	}
	return n
}

// Intake is what a feeder of Run (a fleet worker) needs to hand the engine
// only jobs it starts soon: the places of its first stages, parse and
// synthesize (their workers, as many as the shape has now, and their
// queues), and how many jobs of the current Run have gone through them
// (moved on to pin/transfer, or failed there or before; pipeline.Through).
// The jobs sent to Run less those gone through wait in those stages or on
// their way in: a feeder that keeps them within the places holds back no
// job that another engine could start, while Capacity bounds all the
// jobs in flight. A line answered at intake (Options.SkipDone) never
// enters the stages, and a request of partitions enters as one job each.
func (e *Engine) Intake() (places int, through int64) {
	first := []string{stages.Parse, stages.Synthesize}
	e.mu.Lock()
	p := e.pipe
	e.mu.Unlock()
	workers := map[string]int{}
	if p != nil {
		for _, c := range p.Snapshot() {
			workers[c.Name] = c.Workers
		}
		through = p.Through(first[len(first)-1])
	}
	for _, name := range first {
		s := e.opts.shape(name)
		if w, ok := workers[name]; ok {
			s.Workers = w
		}
		places += max(s.Workers, 1) + s.Queue
	}
	return places, through
}

// Out is the output directory; nil under Options.Output.
func (e *Engine) Out() *OutDir { return e.out }

// Snapshot is the engine's state at one moment, for status lines and metrics.
type Snapshot struct {
	Proved, Failed, Resumed int64
	Elapsed                 time.Duration         // since Run started
	Stages                  []pipeline.StageCount // nil before Run
	Memory                  mem.Stats
	Backend                 string
}

// Snapshot reports the engine's counts, stages and memory. Safe from any
// goroutine, and after Close, when it reports the counts and backend only.
func (e *Engine) Snapshot() Snapshot {
	s := Snapshot{Proved: e.proved.Load(), Failed: e.failed.Load(), Resumed: e.resumed.Load(), Backend: e.backend.Name()}
	if !e.enter() {
		return s
	}
	defer e.exit()
	e.mu.Lock()
	p, t0 := e.pipe, e.t0
	e.mu.Unlock()
	if p != nil {
		s.Stages, s.Elapsed = p.Snapshot(), time.Since(t0)
	}
	s.Memory = e.gov.Sample()
	return s
}

// ErrRunning is Run's error while another Run of the engine is going: runs
// may follow one another on one engine, not overlap (Prove may go beside
// one).
var ErrRunning = errors.New("engine: a Run is already going on this engine; call Run again once it returns")

// ErrOutput marks a run stopped because its outputs could not be written.
var ErrOutput = errors.New("outputs cannot be written")

// Run proves every job from jobs and hands each result line to emit, from
// one goroutine at a time, in the order jobs finish. It returns when jobs is
// closed and every job taken has its result (nil), or when ctx is cancelled.
//
// When an output file cannot be written (a full or read-only disk), Run
// stops taking jobs, lets those in flight finish (each reports its own
// error) and returns an error wrapping ErrOutput. When emit fails, Run
// cancels the jobs in flight and returns emit's error. Run may be called
// again once it has returned (a second Run while one goes returns
// ErrRunning); Close cancels it and waits for it to return, and after
// Close it returns ErrClosed.
func (e *Engine) Run(ctx context.Context, jobs <-chan stream.Line, emit func(stream.Result) error) error {
	return e.run(ctx, nil, func(in *jobIntake) {
		// the one goroutine between the caller's channel and stage 1
		go func() {
			defer in.close()
			for {
				select {
				case l, ok := <-jobs:
					if !ok || !in.take(l) {
						return
					}
				case <-in.done:
					return
				}
			}
		}()
	}, emit)
}

// drainReadGrace is how long reads of a job's input files (a witness, a
// wtns) may go on once the intake has ended (a first signal): a FIFO
// nobody writes to must not hold up the drain until its read timeout,
// however long --read-timeout is, while a witness on a working disk is
// read whole well within it.
const drainReadGrace = 5 * time.Second

// run is Run over the job lines that feed hands to in.take from a
// goroutine of its own, which calls in.close when its lines end; feed
// must return at once. When streamIntake (Stream's) ends, run takes no
// more lines, and the reads of the jobs' files still under way end
// drainReadGrace later.
func (e *Engine) run(ctx, streamIntake context.Context, feed func(in *jobIntake), emit func(stream.Result) error) error {
	if e.running.Swap(true) {
		return ErrRunning
	}
	defer e.running.Store(false)
	hard, cancelHard := context.WithCancel(ctx)
	defer cancelHard()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.busy.Add(1)
	e.stopRun = cancelHard
	e.mu.Unlock()
	defer e.exit()
	intakeCtx, stopIntake := context.WithCancel(hard)
	defer stopIntake()
	reads, stopReads := context.WithCancelCause(hard)
	defer stopReads(nil)
	if streamIntake != nil {
		defer context.AfterFunc(streamIntake, stopIntake)()
		defer context.AfterFunc(streamIntake, func() {
			t := time.NewTimer(drainReadGrace)
			defer t.Stop()
			select {
			case <-t.C:
				stopReads(fmt.Errorf("intake stopped (a signal) and the read had not ended %s later", drainReadGrace))
			case <-reads.Done(): // run returned
			}
		})()
	}

	var emitMu sync.Mutex
	var emitErr error
	send := func(r stream.Result) {
		emitMu.Lock()
		defer emitMu.Unlock()
		if err := emit(r); err != nil && emitErr == nil {
			emitErr = fmt.Errorf("write result of %s: %w", r.ID, err)
			cancelHard()
		}
	}
	e.out.OnFailed(func(err error) {
		fmt.Fprintf(e.log, "zkpipe: %v; taking no more jobs, finishing those in flight\n", err)
		stopIntake()
	})

	// The pipeline is this run's before a line is taken (Intake counts
	// the lines of this run's feeder).
	p := e.core.Pipeline(reads)
	e.mu.Lock()
	e.pipe, e.t0 = p, time.Now()
	e.mu.Unlock()
	in := &jobIntake{e: e, in: make(chan *stages.Job), done: intakeCtx.Done(), reads: reads, hard: hard, send: send}
	defer context.AfterFunc(intakeCtx, in.close)()
	feed(in)

	e.status.every, e.status.line, e.status.state = e.opts.Memory.Status, e.statusLine, e.statusState
	e.status.start()
	defer e.status.stop()
	observe, stopAdapting := e.startAdapting(hard)
	defer stopAdapting()

	err := e.core.Run(hard, p, in.in, func(r CoreResult) {
		if r.Job.Owned {
			in.inFlight.Delete(r.Job.ID)
		}
		r.Job.WitnessInput.Release() // a job that failed before parse read it
		line := r.Line
		if line.Error == "" {
			e.proved.Add(1)
		} else {
			e.failed.Add(1)
		}
		observe(line)
		if part, ok := in.parts.LoadAndDelete(r.Job); ok {
			// a partition: its request's line comes with its last one
			pt := part.(partOf)
			if line, trace, last := pt.req.add(pt.index, line, traceOf(r)); last {
				in.finishRequest(line, trace, false)
			}
			return
		}
		e.tracer.Record(traceOf(r))
		e.notes.note(&line, e.shapeNow)
		send(line)
	})
	// A run cancelled (ctx, or Close) may see its intake close and its
	// pipeline drain before it sees the cancellation: it still ends
	// cancelled, as Run says, not as if its jobs had ended.
	if err == nil {
		err = hard.Err()
	}
	cancelHard()
	in.close() // waits for a take under way: no result is emitted after run returns
	emitMu.Lock()
	defer emitMu.Unlock()
	switch {
	case emitErr != nil:
		return emitErr
	case err != nil:
		return err
	}
	if werr := e.out.Failed(); werr != nil {
		return werr // wraps ErrOutput
	}
	return nil
}

// traceOf is what tracing needs of a finished job.
func traceOf(r CoreResult) tracing.Job {
	constraints := 0
	if r.Job.Circuit != nil {
		constraints = r.Job.Circuit.Constraints
	}
	return tracing.Job{
		ID: r.Line.ID, Circuit: r.Line.Circuit, Constraints: constraints,
		ReservedBytes: r.Line.ReservedBytes,
		Timings:       r.Timings, Err: r.Err, FailedStage: r.Stage, Device: r.Line.Device,
	}
}

// jobIntake is where job lines become jobs for stage 1, in the goroutine that
// feeds them: each line's id is checked (unless its reader has), a second
// job of an id in flight is refused (two jobs of one id would write each
// other's files), its witness file checked, and with SkipDone a job an
// earlier run finished is answered from its outputs.
type jobIntake struct {
	e     *Engine
	reads context.Context  // bounds the reads of a resume's check (and the pipeline's parse)
	in    chan *stages.Job // stage 1's input, closed once by close
	done  <-chan struct{}  // intake ended: take no more
	hard  context.Context  // the run's
	send  func(stream.Result)

	inFlight sync.Map // ids of the jobs (and requests) taken and not yet answered
	parts    sync.Map // *stages.Job of a request's partition → partOf

	// mu is held by a take under way and by close: close waits for the
	// take, and no take sends after close.
	mu     sync.Mutex
	closed bool
}

// take makes l a job and hands it to stage 1; false once intake has ended
// (the line is not taken).
func (t *jobIntake) take(l stream.Line) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	if l.Err == nil && l.Request.IsPartitioned() {
		return t.takeRequest(l)
	}
	e := t.e
	j := &stages.Job{Request: l.Request, Line: l.Number, Err: l.Err, WitnessInput: l.Witness, Out: l.Out}
	switch {
	case j.Err != nil:
	case !l.IDChecked && !stream.ValidID(j.ID):
		j.Err = fmt.Errorf("invalid id %q: want 1-128 of [A-Za-z0-9._-], not starting with . _ or -", j.ID)
	default:
		if err := e.checkWitness(j); err != nil {
			j.Err = err
		} else if _, dup := t.inFlight.LoadOrStore(j.ID, true); dup {
			j.Err = fmt.Errorf("%w %q: a job of that id is in flight", stream.ErrDuplicateID, j.ID)
		} else {
			j.Owned = true
		}
	}
	if e.opts.SkipDone && j.Err == nil {
		if r, done := e.resume(t.reads, j); done {
			t.inFlight.Delete(j.ID)
			if t.hard.Err() == nil { // Run may be returning: emit no more
				t.send(r)
			}
			return true
		}
	}
	return t.enter(j)
}

// enter hands j to stage 1 (t.mu held); false when intake ends first.
func (t *jobIntake) enter(j *stages.Job) bool {
	select {
	case t.in <- j:
		return true
	case <-t.done:
		if j.Owned {
			t.inFlight.Delete(j.ID)
		}
		j.WitnessInput.Release() // not taken: no stage will read it
		return false
	}
}

// close ends stage 1's input, once.
func (t *jobIntake) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.in)
	}
}

// hostFault tells a failure of the prover's host (its disk, its GPU) from one
// of the job: the job may well prove elsewhere (a fleet worker hands it
// back to the queue instead of failing it).
func hostFault(err error) bool {
	return errors.Is(err, ErrOutput) || errors.Is(err, gpu.ErrDeviceLost) ||
		errors.Is(err, gpu.ErrNoDevice) || errors.Is(err, gpu.ErrClosed)
}

// resume answers j from the outputs an earlier run left, when they verify
// and their public inputs are those of j's own witness (stream.Statement):
// a proof of job b copied under job a's name verifies too. Otherwise j is
// proven again, and its new files replace the stale ones (each written
// atomically). A job whose public inputs are known only once proven (a
// circom input job) is always proven again.
func (e *Engine) resume(ctx context.Context, j *stages.Job) (stream.Result, bool) {
	r, done := e.finished(ctx, j)
	if done {
		e.resumed.Add(1)
	}
	return r, done
}

// finished is resume without counting: the result line of j's earlier
// outputs when they verify and bind to j's witness, and true.
func (e *Engine) finished(ctx context.Context, j *stages.Job) (stream.Result, bool) {
	c, err := e.core.Circuit(j.Request.Circuit)
	if err != nil {
		return stream.Result{}, false // parse will say why
	}
	j.Circuit = c
	em, err := e.stored(ctx, c, j.ID)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(e.log, "zkpipe: job %s: the outputs of an earlier run do not verify (%v); proving it again\n", j.ID, err)
		}
		return stream.Result{}, false
	}
	want, known, err := c.Source.PublicInputs(ctx, j.Request)
	switch {
	case err != nil:
		fmt.Fprintf(e.log, "zkpipe: job %s: its public inputs cannot be read to compare with the earlier run's (%v); proving it again\n", j.ID, err)
		return stream.Result{}, false
	case !known:
		fmt.Fprintf(e.log, "zkpipe: job %s: its public inputs are known only once its witness is computed; proving it again\n", j.ID)
		return stream.Result{}, false
	}
	if err := stream.SamePublicInputs(want, em.PublicInputs, "the job's own witness"); err != nil {
		fmt.Fprintf(e.log, "zkpipe: job %s: the earlier run's %s: %v; proving it again\n", j.ID, em.Proof, err)
		return stream.Result{}, false
	}
	return stream.Result{ID: j.ID, Circuit: c.Name, Proof: em.Proof, Public: em.Public,
		PublicInputs: em.PublicInputs, Calldata: em.Calldata, Resumed: true, Stages: []stream.StageTime{}}, true
}

func (e *Engine) statusState() (key string, busy bool) {
	s := e.Snapshot()
	return statusState(s.Proved, s.Failed, s.Stages, s.Memory)
}

// stored checks the outputs job id left in the output directory with its
// circuit's Verifier: its proof and public inputs verify, the outputs the
// job keeps as made (gnark's ID.proof.json) are those of that proof, and
// the others made from it (calldata, where the circuit's proofs have it)
// are written again. An error wraps fs.ErrNotExist when the job left no
// proof there.
func (e *Engine) stored(ctx context.Context, c *stages.Circuit, id string) (stages.Emitted, error) {
	v, dir := c.Source.Verifier(), e.out.Path()
	r := blob.DirReader(dir)
	got, err := v.Check(ctx, r, v.Outputs(id))
	if err != nil {
		return stages.Emitted{}, err
	}
	if err := got.HoldsKept(ctx, r); err != nil {
		return stages.Emitted{}, err
	}
	em := stages.Emitted{Proof: r.Where(got.Outputs.Proof), Public: r.Where(got.Outputs.Public), PublicInputs: got.PublicInputs}
	for _, m := range got.Made {
		if m.Kept {
			continue
		}
		path, err := blob.Dir(dir).Write(m.Name, m.Data)
		if err != nil {
			return stages.Emitted{}, err
		}
		if m.Calldata {
			em.Calldata = path
		}
	}
	return em, nil
}

func (e *Engine) statusLine() string {
	s := e.Snapshot()
	line := statusLine(s.Proved, s.Failed, s.Elapsed, s.Stages, s.Memory)
	if e.multi != nil {
		line += " | " + sharesLine(e.multi)
	}
	return line
}

// Close stops tracing (waiting at most 10 s for the collector), releases
// the circuits, the pinned buffers, the backend and the output directory.
// A Run in progress is cancelled first, and Close waits for it (and for
// calls such as Snapshot already under way) to return. Safe to call more
// than once; a later call does nothing.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	stop := e.stopRun
	pr := e.provers
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
	if pr != nil {
		pr.stop()
	}
	e.busy.Wait()
	var errs []error
	if e.tracer != nil {
		// Bounded: an unreachable collector must not keep zkpipe from exiting.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := e.tracer.Close(ctx); err != nil {
			fmt.Fprintf(e.log, "zkpipe: tracing: last spans not delivered within 10s: %v\n", err)
		}
		cancel()
		e.tracer = nil
	}
	if e.core != nil {
		// the keys it made resident, and their device charges
		if err := e.core.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	e.mu.Lock()
	owned := e.owned
	e.owned = nil
	e.mu.Unlock()
	for _, c := range owned {
		if err := closeCircuit(c); err != nil {
			errs = append(errs, err)
		}
	}
	if e.pinned != nil {
		if err := e.pinned.Close(); err != nil {
			errs = append(errs, err)
		}
		e.pinned = nil
	}
	e.mu.Lock()
	holds := e.holds
	e.holds = nil
	e.mu.Unlock()
	for _, h := range holds {
		h.Close()
	}
	e.goRT.restore()
	e.goRT = nil
	e.gov = nil
	for _, c := range e.cudas {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	e.cudas = nil
	if err := e.out.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// closeCircuit frees c's device keys and its source's resources.
func closeCircuit(c *stages.Circuit) error {
	var errs []error
	if c.Resident != nil {
		errs = append(errs, c.Resident.Close())
		c.Resident = nil
	}
	if c.Source != nil {
		errs = append(errs, c.Source.Close(context.Background()))
	}
	return errors.Join(errs...)
}
