package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Cache is where circuits fetched from the store stay (Cache/circuits),
	// shared by the workers of a host: each circuit is fetched and loaded
	// under a lock of its own (sharedcache.go), so one fetch serves them
	// all. Nothing else is written there, and a worker needs no scratch
	// of its own: a job's witness is fetched into memory and its outputs
	// stored from memory.
	Cache string
	// MaxDeliveries answers a job with an error and terminates it once
	// this many of its deliveries ended without an answer (the worker was
	// killed, ran out of memory, was stopped) while it ran alone: a job
	// that kills every worker that takes it must not go round for ever,
	// and the innocent jobs those workers held must not go with it. A job
	// with such a delivery runs alone from then on (see handBacks);
	// deliveries that a worker handed back do not count. 0 means 5.
	MaxDeliveries int
	// MaxHostFaults answers a job with an error and terminates it once
	// workers have handed it back this many times for faults of their own
	// (a lost GPU, a full disk): a budget apart from MaxDeliveries, so that
	// a job that met a few sick workers is not dropped, and one that makes
	// every GPU fail still ends. 0 means 20.
	MaxHostFaults int
	// JobTimeout bounds a job's time in the prover (the engine's pipeline):
	// a job still unanswered this long after it entered is taken from it
	// (its heartbeats stop), and the prover is deemed stuck on it: the
	// worker terminates the job with its error if it ran alone, or hands it
	// back to be tried alone if other jobs shared the prover with it (one
	// of them may be what is stuck), stops taking jobs and returns
	// ErrProverStuck once nothing else of its own is in the prover (the
	// caller starts a new prover). The circom calculator's own deadline
	// on a wasm call should be shorter: the job then fails in the engine,
	// which is cleaner. 0 means DefaultJobTimeout.
	JobTimeout time.Duration
	// Poll is how often an idle worker looks for jobs it was not woken for
	// (redeliveries, jobs published by other tools); 0 means a second.
	Poll time.Duration
	// MaxInHand caps the jobs the worker holds at once (pulled and not yet
	// answered); 0 means the prover's Capacity. Whatever the cap, it pulls
	// only what the prover can start soon (Prover.Intake): the rest wait in
	// the queue for any worker.
	MaxInHand int
	Log       io.Writer // nil: os.Stderr
	Observer  Observer  // nil: none
	// Gnark is how the worker reads the gnark circuits it fetches (its
	// ReadTimeout bounds circom witnesses too).
	Gnark gnarksrc.Options
	// Wasm bounds the circom witness calculators of the circuits it
	// fetches (--wasm-timeout, --wasm-memory); zero: circomsrc's defaults.
	Wasm circomsrc.Limits
}

// DefaultJobTimeout is WorkerOptions.JobTimeout's default: longer than
// any proof a worker is meant to make (2^26 constraints on a CPU).
const DefaultJobTimeout = time.Hour

// ErrProverStuck is what Run returns when a job outlived JobTimeout in the
// prover: the prover (whose Run could not be trusted to end) was
// cancelled, and must not be used again.
var ErrProverStuck = errors.New("the prover is stuck")

// proverGrace is how long Run waits for a stuck prover to return once it
// is cancelled; one that does not is left behind (its goroutines leak
// until the process ends).
const proverGrace = 10 * time.Second

// maxHostFaults is how many jobs in a row may fail for reasons of the
// worker's own (its disk, its GPU: stream.Result.Retryable) before it stops
// pulling: they go back to the queue for other workers, and a worker that
// cannot prove must not drain the queue into failures.
const maxHostFaults = 3

// Worker takes jobs from the queue into a Prover (see the package comment
// for its duties). Make one with NewWorker and call Run once.
type Worker struct {
	q     *Queue
	p     Prover
	o     WorkerOptions
	slots chan struct{} // one per job in hand: the bound on pulled jobs
	wake  chan struct{}
	sent  atomic.Int64 // jobs sent to the prover (Run's channel), ever

	hostFaults atomic.Int32 // jobs in a row that failed for the worker's reasons
	stopPull   context.CancelFunc
	faultMu    sync.Mutex
	faultErr   error // why the worker stopped pulling, if it did

	mu    sync.Mutex
	held  map[string]*held // by job id
	loads sync.Mutex       // one circuit fetch at a time
	wires sync.Map         // circuit name → its wire count, for those this worker loaded
	keys  sync.Map         // circuit name → *Verifier, for those this worker loaded
	vkeys *storeKeys       // keys of circuits the prover came with

	// The prover's share (under mu): how many held jobs are in it, and
	// whether one of them is a suspect running alone (see enter). gate is
	// closed and replaced whenever either changes.
	inProver int
	solo     bool
	gate     chan struct{}

	stuck       atomic.Bool   // a job outlived JobTimeout in the prover
	cancelProve func()        // set by Run
	abandon     sync.Once     // cancels the stuck prover, once
	abandoned   chan struct{} // closed then

	jobs     chan stream.Line
	finished chan finished
	finDone  chan struct{} // closed when no more results are taken
	stopped  chan struct{} // closed when the prover's Run returns
}

// held is a job this worker has pulled and not yet answered.
type held struct {
	msg     jetstream.Msg
	id      string
	seq     uint64   // stream sequence: names the result for deduplication
	objects []string // witness objects to remove when done
	// witness is the job's witness, fetched into memory when the prover's
	// parse opens it (nil for a job without one): the source releases it
	// once decoded, and the worker whenever it lets the job go. out takes
	// the job's outputs from the prover, to be stored as they were written.
	witness    *blob.Input
	storeFault atomic.Pointer[error] // the store failed the witness's fetch
	out        *blob.Memory
	circuit    string
	part       *partRef // a partition of a request; nil: a job
	counted    bool     // delivered before: a hand-back count may exist
	// suspect: an earlier delivery ended with no answer (its worker died,
	// or stopped or timed out while the job was in its prover); it runs
	// alone, so that what happens to the worker then is its own doing.
	suspect    bool
	soloMarked bool // its run alone is counted in the store (handBacks.Solo)
	entered    bool // sent to the prover (a suspect: from its circuit's load on)
	loading    bool // a suspect loading its circuit alone: not timed yet
	enteredAt  time.Time
	alone      bool // entered as a suspect: nothing else in the prover
	company    bool // shared the prover with another job at some time
	left       bool // out of the prover's share (answered, or timed out)
	answering  bool // the prover's result is being handled
	timedOut   bool
	released   bool
}

type finished struct {
	h   *held
	res stream.Result
}

// NewWorker makes a worker feeding p from q.
func NewWorker(q *Queue, p Prover, o WorkerOptions) *Worker {
	if o.MaxDeliveries <= 0 {
		o.MaxDeliveries = 5
	}
	if o.MaxHostFaults <= 0 {
		o.MaxHostFaults = 20
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = DefaultJobTimeout
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	c := max(p.Capacity(), 1)
	if o.MaxInHand > 0 {
		c = min(c, o.MaxInHand)
	}
	return &Worker{
		q: q, p: p, o: o,
		slots:     make(chan struct{}, c),
		wake:      make(chan struct{}, 1),
		held:      make(map[string]*held),
		vkeys:     newStoreKeys(q),
		gate:      make(chan struct{}),
		abandoned: make(chan struct{}),
		jobs:      make(chan stream.Line),
		finished:  make(chan finished, c),
		finDone:   make(chan struct{}),
		stopped:   make(chan struct{}),
	}
}

// InHand is how many pulled jobs have no answer yet.
func (w *Worker) InHand() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.held)
}

// Capacity is the most jobs the worker holds at once: the prover's
// Capacity, or WorkerOptions.MaxInHand if fewer.
func (w *Worker) Capacity() int { return cap(w.slots) }

func (w *Worker) logf(format string, args ...any) {
	fmt.Fprintf(w.o.Log, "zkpipe: worker: "+format+"\n", args...)
}

func (w *Worker) observe(outcome string) {
	if w.o.Observer != nil {
		w.o.Observer.Job(outcome)
	}
}

// Run pulls and proves jobs until intake ends, then stops pulling, lets the
// jobs in hand finish, answers them and returns. Ending ctx cancels the jobs
// in hand: they go back to the queue (as they would after the ack wait if
// the process died). intake should derive from ctx.
func (w *Worker) Run(ctx, intake context.Context) error {
	intake, w.stopPull = context.WithCancel(intake)
	defer w.stopPull()
	// A submit wakes an idle worker at once.
	sub, err := w.q.Conn.NC.Subscribe(wakeSubject, func(*nats.Msg) { w.signal() })
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()

	// The prover runs until the intake closes jobs, or ctx ends.
	proveCtx, cancelProve := context.WithCancel(ctx)
	defer cancelProve()
	w.cancelProve = cancelProve
	proveErr := make(chan error, 1)
	go func() {
		defer close(w.stopped)
		proveErr <- w.p.Run(proveCtx, w.jobs, w.emit)
	}()

	var bg sync.WaitGroup
	const finishers = 2 // uploads overlap; each job's steps stay in order
	for range finishers {
		bg.Go(func() {
			for {
				select {
				case f := <-w.finished:
					w.finish(proveCtx, f.h, f.res)
				case <-w.finDone:
					for { // what the prover emitted before it returned
						select {
						case f := <-w.finished:
							w.finish(proveCtx, f.h, f.res)
						default:
							return
						}
					}
				}
			}
		})
	}
	beat, stopBeat := context.WithCancel(proveCtx)
	bg.Go(func() { w.heartbeat(beat) })

	w.intake(intake)
	close(w.jobs)
	select {
	case err = <-proveErr:
	case <-w.abandoned:
		select {
		case err = <-proveErr:
		case <-time.After(proverGrace):
			w.logf("the stuck prover did not return within %s of its cancel; left behind", proverGrace)
		}
	}
	close(w.finDone)
	stopBeat()
	bg.Wait()
	// Anything still held (cancelled, or the prover failed) goes back to
	// the queue.
	w.mu.Lock()
	var back []*held
	for _, h := range w.held {
		back = append(back, h)
	}
	w.mu.Unlock()
	// one deadline for them all: NATS may be what is gone
	backCtx, cancelBack := context.WithTimeout(context.Background(), handBackTimeout)
	defer cancelBack()
	for _, h := range back {
		if h.entered {
			// Stopped while in the prover: a delivery that ended with no
			// answer, as if the worker had died (the job may be what
			// stopped it); it runs alone next time.
			w.lostBack(h)
		} else {
			w.handBackWithin(backCtx, h, false, 0)
		}
		h.witness.Release() // another worker takes it, with its own copy
	}
	w.faultMu.Lock()
	defer w.faultMu.Unlock()
	if w.stuck.Load() {
		return w.faultErr // wraps ErrProverStuck: ctx's end came from it
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if w.faultErr != nil && err == nil {
		return w.faultErr
	}
	return err
}

func (w *Worker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// intake pulls jobs while there is room, highest priority first: no more
// than the slots left (Capacity: the jobs in hand) and the prover's room
// (what it can start soon), so that jobs it could not start for a while
// wait in the queue, where another worker may take them.
func (w *Worker) intake(ctx context.Context) {
	poll := time.NewTicker(w.o.Poll)
	defer poll.Stop()
	for {
		if !w.awaitRoom(ctx) {
			return
		}
		// One slot, waiting for it; then as many more as are free and
		// the prover has room for (only this goroutine sends it jobs:
		// the room does not shrink meanwhile).
		select {
		case w.slots <- struct{}{}:
		case <-ctx.Done():
			return
		case <-w.stopped:
			return
		}
		n, most := 1, min(cap(w.slots), w.room())
	more:
		for n < most {
			select {
			case w.slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		msgs := w.fetch(ctx, n)
		for range n - len(msgs) {
			<-w.slots
		}
		w.startBatch(ctx, msgs)
		if len(msgs) > 0 {
			continue
		}
		select {
		case <-w.wake:
		case <-poll.C:
		case <-ctx.Done():
			return
		case <-w.stopped:
			return
		}
	}
}

// roomPoll is how often a worker whose prover has no room looks again: the
// prover tells no one when a job leaves its first stages, and a look is a
// few atomic loads.
const roomPoll = 20 * time.Millisecond

// room is how many more jobs the prover can start soon: the places of its
// first stages less the jobs sent to it that have not gone through them
// (Prover.Intake). A job counts from before its send, so a job on its way
// in is never missed.
func (w *Worker) room() int {
	places, through := w.p.Intake()
	return places - int(w.sent.Load()-through)
}

// awaitRoom waits until the prover has room for a job; false when ctx ends
// or the prover stops first.
func (w *Worker) awaitRoom(ctx context.Context) bool {
	if w.room() > 0 {
		return true
	}
	t := time.NewTicker(roomPoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if w.room() > 0 {
				return true
			}
		case <-ctx.Done():
			return false
		case <-w.stopped:
			return false
		}
	}
}

// startBatch starts the fetched messages one after another, keeping the
// ones not yet started alive meanwhile: the ack clock of every message runs
// from the fetch, and starting one may take long (its circuit fetched from
// the store and loaded, its witness downloaded, the pipeline full).
func (w *Worker) startBatch(ctx context.Context, msgs []jetstream.Msg) {
	if len(msgs) == 0 {
		return
	}
	var next atomic.Int32 // msgs[next:] are waiting
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(max(w.q.ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				for _, m := range msgs[next.Load():] {
					m.InProgress()
				}
			case <-done:
				return
			}
		}
	}()
	for i, m := range msgs {
		next.Store(int32(i + 1))
		w.start(ctx, m)
	}
	close(done)
}

// fetch takes up to n waiting jobs, every high one before any normal one
// and every normal one before any low one.
func (w *Worker) fetch(ctx context.Context, n int) []jetstream.Msg {
	var out []jetstream.Msg
	for _, c := range w.q.consumers {
		if len(out) == n || ctx.Err() != nil {
			break
		}
		b, err := c.FetchNoWait(n - len(out))
		if err != nil {
			w.logf("fetch: %v", err)
			continue
		}
		for m := range b.Messages() {
			out = append(out, m)
		}
		if err := b.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
			w.logf("fetch: %v", err)
		}
	}
	return out
}

// release gives h's slot back, once.
func (w *Worker) release(h *held) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	h.witness.Release() // if the prover did not (a job that never got to parse)
	if w.held[h.id] == h {
		delete(w.held, h.id)
	}
	w.leaveLocked(h)
	<-w.slots
}

// enter takes h into the prover's share. A suspect waits until nothing
// else is in the prover and keeps it to itself; the others wait while a
// suspect runs. (start runs in one goroutine, so one job at most waits
// here.) false: ctx ended, the prover stopped first, or it is stuck (a
// job that entered now would wait behind what it is stuck on, and time
// out as if it were the culprit).
func (w *Worker) enter(ctx context.Context, h *held) bool {
	for {
		if w.stuck.Load() {
			return false
		}
		w.mu.Lock()
		if !w.solo && (!h.suspect || w.inProver == 0) {
			w.inProver++
			h.entered, h.enteredAt = true, time.Now()
			if h.suspect {
				w.solo, h.alone = true, true
			} else if w.inProver > 1 {
				for _, o := range w.held {
					if o.entered && !o.left {
						o.company = true
					}
				}
			}
			w.mu.Unlock()
			return true
		}
		gate := w.gate
		w.mu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
			return false
		case <-w.stopped:
			return false
		}
	}
}

// (timeOut sets stuck before it leaves the prover's share, so a job
// waiting at the gate sees it when the gate opens.)

// leaveLocked takes h out of the prover's share; w.mu is held.
func (w *Worker) leaveLocked(h *held) {
	if !h.entered || h.left {
		return
	}
	h.left = true
	w.inProver--
	if h.alone {
		w.solo = false
	}
	close(w.gate)
	w.gate = make(chan struct{})
}

// start answers msg at once when it can (stored, bad, duplicate) and
// otherwise prepares it and hands it to the prover; it holds a slot.
func (w *Worker) start(ctx context.Context, msg jetstream.Msg) {
	h := &held{msg: msg}
	meta, err := msg.Metadata()
	if err != nil {
		w.logf("message without metadata: %v", err)
		msg.Term()
		<-w.slots
		return
	}
	h.seq = meta.Sequence.Stream
	// Until its own id is read and found valid, the job is named by its
	// stream sequence under a name no valid id can be ('#', as prove's
	// stream.LineID): a message with a bad id must not be answered under
	// the id of another job ("seq-330" is a valid one).
	h.id = seqID(h.seq)
	h.counted = meta.NumDelivered > 1
	if w.o.Observer != nil && meta.NumDelivered == 1 {
		w.o.Observer.Waited(time.Since(meta.Timestamp))
	}

	var req stream.Request
	dec := json.NewDecoder(bytes.NewReader(msg.Data()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		w.fail(ctx, h, "", fmt.Errorf("job %s: malformed job: %v", h.id, err))
		return
	}
	part, err := partOf(msg.Headers(), req.ID)
	switch {
	case err != nil:
		w.fail(ctx, h, "", fmt.Errorf("job %s: %w", h.id, err))
		return
	case part == nil && !validName(req.ID):
		w.fail(ctx, h, "", fmt.Errorf("job %s: invalid id %q", h.id, req.ID))
		return
	}
	h.id, h.part, h.circuit = req.ID, part, req.Circuit
	if req.IsPartitioned() {
		// published past submit, which queues a partition a message: its
		// partitions are not proven as one job
		w.fail(ctx, h, req.Circuit, partitionsRefused(req))
		return
	}
	// The witness objects are the job's from here on: whichever way it is
	// answered (even a dead letter), they are removed before the ack.
	for _, p := range []string{req.Witness, req.Wtns} {
		if obj, ok := strings.CutPrefix(p, witnessRef); ok && ownedObject(h.id, obj) {
			h.objects = append(h.objects, obj)
		}
	}

	w.mu.Lock()
	_, dup := w.held[h.id]
	if !dup {
		w.held[h.id] = h
	}
	w.mu.Unlock()
	if dup {
		// The same id twice in hand (submitted again after the duplicate
		// window): answer it after the first, from the stored outputs.
		w.handBack(h, false, w.q.ackWait)
		<-w.slots
		return
	}

	if done, err := w.republish(ctx, h, req); done || err != nil {
		if err != nil {
			w.requeueFor(h, err, meta.NumDelivered)
		}
		return
	}
	h.circuit = req.Circuit
	if h.counted {
		var hb handBacks
		err := retryQuick(ctx, func(ctx context.Context) (err error) { hb, _, err = w.q.readHandBacks(ctx, h.seq); return err })
		lost := int(meta.NumDelivered) - 1 - hb.Back
		if err != nil {
			// unknown: count every delivery against the job, as
			// JetStream does, rather than let a killer go round
			w.logf("job %s: %v", h.id, err)
			hb.Solo = lost
		}
		// Only deliveries that ended with no answer while the job ran
		// alone count against it: a worker killed by another job it held
		// says nothing of this one. A job with any such delivery runs
		// alone from then on, so a killer meets its budget alone.
		h.suspect = lost > 0
		switch {
		case hb.Solo >= w.o.MaxDeliveries:
			w.fail(ctx, h, req.Circuit, fmt.Errorf("job %s: delivered %d times; %d of them it ran alone, on workers that stopped without an answer (killed, out of memory, past fleet.WorkerOptions.JobTimeout?)", h.id, meta.NumDelivered, hb.Solo))
			return
		case hb.Faults >= w.o.MaxHostFaults:
			w.fail(ctx, h, req.Circuit, fmt.Errorf("job %s: handed back %d times by workers that could not prove it for faults of their own (a lost GPU, a full disk?)", h.id, hb.Faults))
			return
		}
	}
	if req.Circuit == "" {
		w.fail(ctx, h, "", fmt.Errorf("job %s: names no circuit", h.id))
		return
	}
	if h.suspect {
		// A suspect runs alone from its circuit's load on, and its run is
		// counted in the store before the load: a worker that dies loading
		// the circuit (a witness calculator's memory at load, say) dies of
		// this job alone, and the death counts towards MaxDeliveries like
		// one in the prover. Counted after the load, a job whose circuit
		// kills every worker that loads it would go round for ever.
		if !w.enter(ctx, h) {
			w.requeue(h, nil)
			return
		}
		w.setLoading(h, true)
		if err := w.q.markSolo(ctx, h.seq); err != nil {
			w.requeue(h, err)
			return
		}
		h.soloMarked = true
		w.logf("job %s: delivered %d times, at least once to a worker that stopped without an answer: it runs alone, from its circuit's load on", h.id, meta.NumDelivered)
	}
	if err := w.ensureCircuit(ctx, req.Circuit); err != nil {
		if diskFault(err) {
			w.ownDiskFault(h, err)
		} else if ctx.Err() == nil && (errors.Is(err, ErrNoCircuit) || !isTransient(err)) {
			w.fail(ctx, h, req.Circuit, fmt.Errorf("job %s: parse: %w", h.id, err))
		} else {
			w.requeueFor(h, err, meta.NumDelivered)
		}
		return
	}
	for _, p := range []*string{&req.Witness, &req.Wtns} {
		if *p == "" {
			continue
		}
		obj, ok := strings.CutPrefix(*p, witnessRef)
		if !ok {
			// A path would be read on whichever worker took the job: a
			// queue's user could read that machine's files.
			w.fail(ctx, h, req.Circuit, fmt.Errorf("job %s: parse: witness %q is not in the store: workers read no local paths (zkpipe submit uploads witness files)", h.id, *p))
			return
		}
		limit, err := w.witnessFits(ctx, req.Circuit, obj)
		if err != nil {
			if errors.Is(err, jetstream.ErrObjectNotFound) {
				w.fail(ctx, h, req.Circuit, fmt.Errorf("job %s: parse: witness %s is not in the store", h.id, obj))
			} else if isTransient(err) {
				w.requeue(h, fmt.Errorf("witness %s: %w", obj, err))
			} else {
				w.fail(ctx, h, req.Circuit, fmt.Errorf("job %s: parse: %w", h.id, err))
			}
			return
		}
		h.witness = blob.Streamed("witness object "+obj, w.witnessStream(h, obj, limit))
	}
	h.out = new(blob.Memory)
	if h.suspect {
		w.setLoading(h, false) // its time in the prover starts now
	} else if !w.enter(ctx, h) {
		w.requeue(h, nil)
		return
	}
	w.sent.Add(1) // before the send: room never misses a job on its way in
	select {
	case w.jobs <- stream.Line{Number: int(h.seq), Request: req, Witness: h.witness, Out: h.out, IDChecked: h.part != nil}:
	case <-ctx.Done():
		w.sent.Add(-1)
		w.requeue(h, nil)
	case <-w.stopped:
		w.sent.Add(-1)
		w.requeue(h, nil)
	}
}

// setLoading marks h, a suspect that entered the prover's share to load its
// circuit alone, as loading (no --job-timeout yet: the load has its own
// bound) or, once loaded, as in the prover from now on.
func (w *Worker) setLoading(h *held, loading bool) {
	w.mu.Lock()
	h.loading = loading
	h.enteredAt = time.Now()
	w.mu.Unlock()
}

// requeueFor hands h back for err, a failure that is not the job's: a
// circuit not whole in the store (a push under way, or one killed midway)
// is waited for, neither a fault of the worker's nor a delivery lost, and
// the hand-backs come further apart the longer it lasts (delivered: the
// job's deliveries so far), up to a minute; anything else is a fault of the
// worker's (requeue).
func (w *Worker) requeueFor(h *held, err error, delivered uint64) {
	if !errors.Is(err, ErrCircuitIncomplete) {
		w.requeue(h, err)
		return
	}
	wait := min(time.Second<<min(delivered-1, 6), time.Minute)
	w.logf("job %s: waits for its circuit: %v; back to the queue for %s", h.id, err, wait)
	w.handBack(h, false, wait)
	w.release(h)
}

// seqID names the job message seq before its own id is known (or when
// that id is unusable): "#seq-N", which no valid id can be.
func seqID(seq uint64) string { return fmt.Sprintf("#seq-%d", seq) }

// isTransient tells a network or server hiccup from a bad circuit.
func isTransient(err error) bool {
	var js jetstream.JetStreamError
	return errors.As(err, &js) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, ErrCircuitIncomplete) // a push under way: the job waits for it
}

// ensureCircuit makes the named circuit resident, fetching it from the
// store on first use.
func (w *Worker) ensureCircuit(ctx context.Context, name string) error {
	if w.p.HasCircuit(name) {
		return nil
	}
	w.loads.Lock()
	defer w.loads.Unlock()
	if w.p.HasCircuit(name) {
		return nil
	}
	t0 := time.Now()
	w.logf("circuit %s: fetching it from the store and loading it", name)
	// bounded: a circuit whose loading never ends (a looping wasm export)
	// must not hold the intake for good
	loadCtx, cancel := context.WithTimeout(ctx, w.o.JobTimeout)
	defer cancel()
	// The witness calculator's instance at load within the memory budget,
	// like every job's: it is allocated whole at its limit (--wasm-memory).
	wasm := w.o.Wasm
	wasm.Hold = func(ctx context.Context, bytes int64) (func(), error) {
		r, err := w.p.HoldInput(ctx, "circuit "+name+" (its load)", bytes)
		if err != nil {
			return nil, err
		}
		return r.Close, nil
	}
	// The host's workers share the cache: the circuit's lock from its
	// fetch to its load (sharedcache.go). Waiting for another's load is
	// no fault of the job's: a wait past the bound sends it back.
	cache := filepath.Join(w.o.Cache, "circuits")
	unlock, err := w.lockCircuit(loadCtx, cache, name)
	if err != nil {
		return err
	}
	defer unlock()
	c, err := FetchCircuit(loadCtx, w.q, name, cache, w.o.Gnark, wasm)
	if err != nil {
		if ctx.Err() == nil && errors.Is(loadCtx.Err(), context.DeadlineExceeded) {
			// the circuit's fault, not a hiccup: not wrapped, so that
			// isTransient does not send the job round again
			return fmt.Errorf("circuit %s: not fetched and loaded within fleet.WorkerOptions.JobTimeout (%s): %v", name, w.o.JobTimeout, err)
		}
		return err
	}
	wires, v := c.NbWires, circuitVerifier(c, "circuit "+name+" as this worker loaded it")
	if err := w.p.AddCircuit(c); err != nil {
		return err
	}
	w.wires.Store(name, wires)
	if v != nil {
		w.keys.Store(name, v)
	}
	w.logf("circuit %s resident (%d constraints), fetched and loaded in %s", name, c.Constraints, time.Since(t0).Round(time.Millisecond))
	return nil
}

// witnessFits checks the size of witness object obj against what a witness
// of the circuit can be, before it is fetched, and returns that bound: a
// job must not fill the worker's memory. A gnark witness is 12 bytes and
// 32 a wire at most, a .wtns 88 bytes and 32 a wire; 4 KiB more allows for
// sections a reader skips.
func (w *Worker) witnessFits(ctx context.Context, circuit, obj string) (int64, error) {
	var info *jetstream.ObjectInfo
	if err := retryQuick(ctx, func(ctx context.Context) (err error) { info, err = w.q.Witness.GetInfo(ctx, obj); return err }); err != nil {
		return 0, err
	}
	wires, ok := w.wiresOf(circuit)
	if !ok {
		return 0, fmt.Errorf("circuit %s: not loaded", circuit) // ensureCircuit made it resident
	}
	limit := 32*int64(wires) + 88 + 4096
	if int64(info.Size) > limit {
		return 0, fmt.Errorf("witness %s: %d bytes, more than a witness of circuit %s can be (%d)", obj, info.Size, circuit, limit)
	}
	return limit, nil
}

// wiresOf is the wire count of a resident circuit: one this worker
// fetched, or one the prover came with.
func (w *Worker) wiresOf(circuit string) (int, bool) {
	if v, ok := w.wires.Load(circuit); ok {
		return v.(int), true
	}
	for _, c := range w.p.Circuits() {
		if c.Name == circuit {
			return c.NbWires, true
		}
	}
	return 0, false
}

// witnessStream opens witness object obj of h when the prover's parse
// opens it: a reader of the store's chunks as the source decodes them, so
// that a witness of gigabytes is never whole in the worker twice (the
// source's copy is the one), its size (at most limit) reserved meanwhile
// with the prover's memory budget (the job's own reservation comes only
// after parse). Opened in parse, not before the job enters: bytes held by
// jobs waiting in the prover's queues could keep the memory that the jobs
// ahead of them wait for at admission, and none would move. A failure of
// the store's (not of the witness), at the open or while it is read, is
// kept in h: the job then goes back to the queue instead of failing.
func (w *Worker) witnessStream(h *held, obj string, limit int64) blob.Stream {
	fault := func(ctx context.Context, err error) error {
		switch {
		case errors.Is(err, jetstream.ErrObjectNotFound):
			return errors.New("not in the store")
		case !errors.Is(err, errTooLarge) && ctx.Err() == nil:
			h.storeFault.Store(&err)
		}
		return err
	}
	return func(ctx context.Context) (io.ReadCloser, int64, *mem.Reservation, error) {
		var info *jetstream.ObjectInfo
		if err := retryQuick(ctx, func(ctx context.Context) (err error) { info, err = w.q.Witness.GetInfo(ctx, obj); return err }); err != nil {
			return nil, 0, nil, fault(ctx, err)
		}
		size := int64(info.Size)
		if size > limit {
			return nil, 0, nil, fmt.Errorf("%w: witness %s: %d bytes, more than a witness of its circuit can be (%d)", errTooLarge, obj, size, limit)
		}
		hold, err := w.p.HoldInput(ctx, h.id, size)
		if err != nil {
			return nil, 0, nil, err // never fits (the job's), or the prover stopped
		}
		r, err := w.q.openObject(ctx, WitnessBucket, info)
		if err != nil {
			hold.Close()
			return nil, 0, nil, fault(ctx, err)
		}
		if got, err := r.Info(); err != nil || got.NUID != info.NUID {
			r.Close()
			hold.Close()
			return nil, 0, nil, fault(ctx, fmt.Errorf("witness %s: replaced while it was opened: %w", obj, jetstream.ErrObjectNotFound))
		}
		return &storeReader{r: r, left: size, fault: func(err error) { fault(ctx, err) }}, size, hold, nil
	}
}

// storeReader reads a witness object's chunks, no more than left bytes,
// reporting a failure of the store's read (not its end) to fault.
type storeReader struct {
	r     *objectReader
	left  int64
	fault func(error)
}

func (s *storeReader) Read(p []byte) (int, error) {
	if s.left <= 0 {
		// the object's own end, where the store checks its digest
		var one [1]byte
		n, err := s.r.Read(one[:])
		switch {
		case n > 0:
			err = fmt.Errorf("the witness object holds more than its declared size")
		case err == nil || err == io.EOF:
			return 0, io.EOF
		}
		s.fault(err)
		return 0, err
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if err != nil && err != io.EOF {
		s.fault(err)
	}
	return n, err
}

func (s *storeReader) Close() error { return s.r.Close() }

// republish answers h from its stored outputs, if the job is done and
// they hold a proof that its circuit's verifying key accepts, of the
// public inputs of the job's witness (a witness or wtns job whose witness
// is still in the store and readable). Outputs that do not (planted by anyone with
// access to the store, or left by an earlier key of the circuit) are not
// republished: the job is proven again, and its new outputs replace them.
// An error is this worker's fault (the store out of reach): the job goes
// back to the queue.
func (w *Worker) republish(ctx context.Context, h *held, req stream.Request) (bool, error) {
	circuit := req.Circuit
	// GetInfo is one direct get; most jobs are not done.
	if err := retryQuick(ctx, func(ctx context.Context) error { _, err := w.q.Proofs.GetInfo(ctx, outputsObject(h.id)); return err }); errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	data, err := getOutputs(ctx, w.q, h.id)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil && ctx.Err() == nil {
		// too large, or unreadable: a store cut off while it was written
		// (its meta stored, chunks missing) never reads; proving the job
		// again replaces it, and costs a proof at worst
		w.logf("job %s: stored outputs %v; proving it again", h.id, err)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var o Outputs
	if err := json.Unmarshal(data, &o); err != nil {
		w.logf("job %s: stored outputs unreadable (%v); proving it again", h.id, err)
		return false, nil
	}
	if circuit == "" {
		// a job put on the queue by another tool: checked against the
		// store's key of the circuit its outputs name, as results does
		circuit = o.Result.Circuit
	}
	if circuit == "" {
		return false, nil // nothing to check them against: the job fails below
	}
	v, err := w.verifier(ctx, circuit)
	if err != nil {
		if errors.Is(err, errRejected) || errors.Is(err, ErrNoCircuit) || !isTransient(err) {
			return false, nil // the job fails on its circuit below
		}
		return false, err
	}
	got, err := v.check(ctx, h.id, o.Files)
	if err != nil {
		w.logf("job %s: stored proof rejected by %s (%v); proving it again", h.id, v.Against, err)
		return false, nil
	}
	if ok, err := w.sameStatement(ctx, h, req, v, got); !ok || err != nil {
		return false, err
	}
	line := o.Result
	line.ID, line.Circuit, line.Error, line.FailedStage, line.Retryable = h.id, circuit, "", "", false
	line.Proof, line.Public, line.Calldata, line.PublicInputs, line.Statement = got.proof, got.public, got.calldata, got.inputs, ""
	if err := w.answer(ctx, h, line); err != nil {
		return false, err
	}
	w.cleanup(ctx, h) // before the ack: a worker that dies first leaves the job to the next
	w.ack(h)
	w.observe("republished")
	w.release(h)
	return true, nil
}

// sameStatement tells whether a verified stored proof is of the public
// inputs of req's witness. Only a witness that says otherwise refuses it:
// one gone from the store (its job answered and cleaned up before the ack
// was lost) or unreadable cannot be compared, and the proof is taken on its
// key alone, as results takes it without --jobs. (Whoever can replace the
// proof can replace the witness object too: the user's anchor is results
// --jobs; this check spares a job answered from another job's proof.) The
// error is a store fault.
func (w *Worker) sameStatement(ctx context.Context, h *held, req stream.Request, v *Verifier, got checked) (bool, error) {
	_, err := statementOf(req).bind(ctx, v, got.inputs, w.q.storedInputs)
	switch {
	case err == nil || errors.Is(err, errNoStoredWitness):
		return true, nil
	case errors.Is(err, errOtherStatement):
		w.logf("job %s: stored proof not republished: %v; proving it again", h.id, err)
		return false, nil
	case ctx.Err() != nil || isTransient(err):
		return false, err
	}
	w.logf("job %s: stored proof's public inputs not compared (%v): taken on its key", h.id, err)
	return true, nil
}

// verifier is the verifying key of circuit: that of the circuit as this
// worker loaded it (the key it proves with), or the store's for a circuit
// the prover came with.
func (w *Worker) verifier(ctx context.Context, circuit string) (*Verifier, error) {
	if err := w.ensureCircuit(ctx, circuit); err != nil {
		return nil, err
	}
	if v, ok := w.keys.Load(circuit); ok {
		return v.(*Verifier), nil
	}
	return w.vkeys.get(ctx, circuit)
}

// requeue hands h back to the queue (after a short delay), for err: a fault
// of this worker's (its disk, its GPU, its link to NATS), or, when err is
// nil, its shutdown.
func (w *Worker) requeue(h *held, err error) {
	if err != nil {
		w.logf("job %s: back to the queue: %v", h.id, err)
	}
	w.handBack(h, err != nil, time.Second)
	w.release(h)
}

// handBack counts a hand-back of h (see handBacks), then Naks it for
// redelivery after delay.
func (w *Worker) handBack(h *held, fault bool, delay time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), handBackTimeout)
	defer cancel()
	w.handBackWithin(ctx, h, fault, delay)
}

func (w *Worker) handBackWithin(ctx context.Context, h *held, fault bool, delay time.Duration) {
	if err := w.q.countHandBack(ctx, h.seq, fault, h.soloMarked); err != nil {
		w.logf("job %s: %v", h.id, err)
	}
	var err error
	if delay > 0 {
		err = h.msg.NakWithDelay(delay)
	} else {
		err = h.msg.Nak()
	}
	if err != nil {
		w.logf("job %s: hand back: %v", h.id, err)
	}
	w.observe("requeued")
}

// lostBack hands h back without counting a hand-back: the delivery counts
// as one that ended with no answer (see handBacks), and the job runs alone
// next time.
func (w *Worker) lostBack(h *held) {
	if err := h.msg.Nak(); err != nil {
		w.logf("job %s: hand back: %v", h.id, err)
	}
	w.observe("requeued")
}

// hostFault hands back to the queue a job that failed for the worker's own
// reasons, and stops pulling after maxHostFaults of them in a row.
func (w *Worker) hostFault(h *held, res stream.Result) {
	w.requeue(h, fmt.Errorf("not the job's fault: %s", res.Error))
	if w.hostFaults.Add(1) < maxHostFaults {
		return
	}
	w.stopTaking(fmt.Errorf("stopped taking jobs: %d in a row failed for reasons of this worker's own (last: %s); they went back to the queue", maxHostFaults, res.Error))
}

// stopTaking stops the intake, for err (the first reason is kept): the
// jobs in the prover finish, and Run returns err.
func (w *Worker) stopTaking(err error) {
	w.faultMu.Lock()
	if w.faultErr == nil {
		w.faultErr = err
		w.logf("%v", err)
	}
	w.faultMu.Unlock()
	w.stopPull()
}

// diskFault tells a failure of the local disk (the worker's cache: full,
// over quota, read-only, failing) from one of the job: the job would
// prove elsewhere, and this worker would fail every job it took.
func diskFault(err error) bool {
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// ownDiskFault hands h back for a fault of the worker's disk and stops the
// intake at once, as a full --out does (the engine stops at its first
// failed write): the worker ends with the error, to be started again when
// the disk has room.
func (w *Worker) ownDiskFault(h *held, err error) {
	w.requeue(h, fmt.Errorf("not the job's fault: %w", err))
	w.stopTaking(fmt.Errorf("stopped taking jobs: this worker's disk: %w; the job went back to the queue", err))
}

// timeOut takes h, which outlived JobTimeout in the prover, from the
// prover's share: it ran alone, so it is what the prover is stuck on, and
// it is terminated with its error; or it shared the prover, and goes back
// to the queue as a delivery that ended with no answer, to run alone next
// time. The prover cannot be trusted any more: the worker stops taking
// jobs, and cancels the prover once nothing else of its own is in it.
func (w *Worker) timeOut(ctx context.Context, h *held) {
	w.mu.Lock()
	if h.timedOut || h.answering || h.left {
		w.mu.Unlock()
		return
	}
	h.timedOut = true
	company := h.company
	w.stuck.Store(true)
	w.leaveLocked(h)
	w.mu.Unlock()
	err := fmt.Errorf("job %s: still unanswered %s after it entered this worker's prover (fleet.WorkerOptions.JobTimeout)", h.id, w.o.JobTimeout)
	if company {
		w.logf("%v; other jobs shared the prover with it: back to the queue, to run alone", err)
		w.lostBack(h)
		w.release(h)
	} else {
		res := stream.Result{ID: h.id, Circuit: h.circuit, Error: err.Error() + ": terminated", Stages: []stream.StageTime{}}
		if w.o.Observer != nil {
			w.o.Observer.Result(res)
		}
		w.answerFailed(ctx, h, res)
	}
	w.stopTaking(fmt.Errorf("%w: %v; stopped taking jobs", ErrProverStuck, err))
}

// abandonIfStuck cancels a stuck prover once no job of the worker's is
// left in it (those that finish are answered first).
func (w *Worker) abandonIfStuck() {
	if !w.stuck.Load() {
		return
	}
	w.mu.Lock()
	n := w.inProver
	w.mu.Unlock()
	if n == 0 {
		w.abandon.Do(func() {
			w.logf("cancelling the stuck prover")
			w.cancelProve()
			close(w.abandoned)
		})
	}
}

// fail answers h with an error result and terminates it.
func (w *Worker) fail(ctx context.Context, h *held, circuit string, err error) {
	res := stream.Result{ID: h.id, Circuit: circuit, Error: err.Error(), FailedStage: "parse", Stages: []stream.StageTime{}}
	if w.o.Observer != nil {
		w.o.Observer.Result(res)
	}
	w.answerFailed(ctx, h, res)
}

func (w *Worker) answerFailed(ctx context.Context, h *held, res stream.Result) {
	if err := w.answer(ctx, h, res); err != nil {
		w.requeue(h, err)
		return
	}
	w.cleanup(ctx, h) // before the terminate, as in finish
	w.terminate(h, "zkpipe: "+res.Error)
	w.observe("failed")
	w.release(h)
}

// emit receives the prover's result lines, in the prover's sink goroutine:
// it only hands them on.
func (w *Worker) emit(res stream.Result) error {
	if w.o.Observer != nil {
		w.o.Observer.Result(res)
	}
	w.mu.Lock()
	h := w.held[res.ID]
	ok := h != nil && h.entered && !h.timedOut
	if ok {
		h.answering = true
	}
	w.mu.Unlock()
	if !ok {
		w.logf("result for job %s, which this worker does not hold (or took from the prover past fleet.WorkerOptions.JobTimeout)", res.ID)
		return nil
	}
	select {
	case w.finished <- finished{h, res}:
	case <-w.finDone: // Run is returning: the job goes back to the queue
	}
	return nil
}

// finish stores a proven job's outputs, publishes its result line and only
// then acks; a failed job gets its error result and is terminated.
func (w *Worker) finish(ctx context.Context, h *held, res stream.Result) {
	if res.Error != "" && res.Retryable {
		w.hostFault(h, res)
		return
	}
	if err := h.storeFault.Load(); res.Error != "" && err != nil {
		// its witness could not be fetched: not the job's fault
		w.requeue(h, fmt.Errorf("witness: %w", *err))
		return
	}
	w.hostFaults.Store(0)
	if res.Error != "" {
		w.answerFailed(ctx, h, res)
		return
	}
	err := w.store(ctx, h, res)
	if err == nil {
		err = w.answer(ctx, h, res)
	}
	if err != nil {
		w.requeue(h, err)
		return
	}
	// Clean up before the ack: a worker that dies after publishing leaves
	// the job unacked, and whoever takes it next answers it from the stored
	// outputs and removes what is left. After the ack nobody would.
	w.cleanup(ctx, h)
	w.ack(h)
	w.observe("proved")
	w.release(h)
}

// Outputs is what the proof store holds for a finished job: its result
// line, whose Proof and Public name entries of Files, and its files.
type Outputs struct {
	Result stream.Result     `json:"result"`
	Files  map[string][]byte `json:"files"`
}

// store puts the outputs the prover wrote for h (each named as in an
// output directory: ID.proof, ID.public, …) and its result line, which
// names them, as one object, in the store.
func (w *Worker) store(ctx context.Context, h *held, line stream.Result) error {
	id := h.id
	o := Outputs{Result: line, Files: map[string][]byte{}}
	for _, name := range h.out.Names() {
		o.Files[name], _ = h.out.File(name)
	}
	for _, name := range []string{line.Proof, line.Public, line.Calldata} {
		if _, ok := o.Files[name]; name != "" && !ok {
			return fmt.Errorf("store outputs of %s: the result line names %s, which the prover did not write", id, name)
		}
	}
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	if err := retry(ctx, failoverWait, func(ctx context.Context) error {
		_, err := w.q.Proofs.PutBytes(ctx, outputsObject(id), data)
		return err
	}); err != nil {
		return w.q.Explain(fmt.Errorf("store outputs of %s: %w", id, err)) // "store disk full" when serve says so
	}
	return nil
}

// answer publishes h's result line or, for a partition of a request,
// records it with its request's (partAnswered).
func (w *Worker) answer(ctx context.Context, h *held, res stream.Result) error {
	if h.part != nil {
		return w.partAnswered(ctx, h, res)
	}
	// Its message id is the job's stream sequence: a redelivered job's
	// result is dropped as a duplicate, a job submitted again gets a new one.
	return w.publishAs(ctx, res, fmt.Sprintf("%s@%d", res.ID, h.seq))
}

// publishAs publishes res, a job's or a request's result line, under the
// message id msgID (tried again while JetStream does not answer): a line
// the server already has is dropped, and counted.
func (w *Worker) publishAs(ctx context.Context, res stream.Result, msgID string) error {
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	m := nats.NewMsg(resultSubject(res.ID))
	m.Data = data
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	var ack *jetstream.PubAck
	err = retryQuick(ctx, func(ctx context.Context) (err error) { ack, err = w.q.Conn.JS.PublishMsg(ctx, m); return err })
	if errors.Is(err, nats.ErrMaxPayload) {
		// more than the server takes in a message (public inputs by the
		// hundred thousand, a long error): the line without its public
		// inputs, which results takes from the verified files anyway, its
		// error cut short, its partitions' timings dropped
		slim := res
		slim.PublicInputs, slim.Shape, slim.ShapeChanges = nil, "", nil
		if len(slim.Error) > maxRecordedError {
			slim.Error = slim.Error[:maxRecordedError] + "…"
		}
		slim.Partitions = slices.Clone(res.Partitions)
		for i := range slim.Partitions {
			slim.Partitions[i].PublicInputs, slim.Partitions[i].Stages = nil, nil
		}
		if m.Data, err = json.Marshal(slim); err == nil {
			w.logf("job %s: its result line is %d bytes, more than the server takes in a message (%d): published without its public inputs", res.ID, len(data), w.q.Conn.NC.MaxPayload())
			err = retryQuick(ctx, func(ctx context.Context) (err error) { ack, err = w.q.Conn.JS.PublishMsg(ctx, m); return err })
		}
	}
	if err != nil {
		return fmt.Errorf("publish result of %s: %w", res.ID, err)
	}
	if ack.Duplicate {
		// the server had this line (a redelivered job answered again, a
		// publish whose ack was lost): dropped, the one before stands
		w.logf("job %s: answered again (message id %s): the server had it already: dropped", res.ID, msgID)
		w.observe("duplicate")
	}
	return nil
}

// cleanup removes what h brought along, once it is answered and before it
// is acked: its witness objects and its hand-back count.
func (w *Worker) cleanup(ctx context.Context, h *held) {
	for _, o := range h.objects {
		if err := retryQuick(ctx, func(ctx context.Context) error { return w.q.Witness.Delete(ctx, o) }); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			w.logf("delete witness %s: %v", o, err)
		}
	}
	if h.counted {
		if err := retryQuick(ctx, func(ctx context.Context) error { return w.q.HandBacks.Delete(ctx, handBackKey(h.seq)) }); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			w.logf("job %s: delete its hand-back count: %v", h.id, err)
		}
	}
}

// ownedObject tells whether the witness object obj belongs to job id, as
// submit names them (ID@NONCE.witness; before, ID.witness): a job must not
// make a worker delete another job's witness.
func ownedObject(id, obj string) bool {
	if rest, ok := strings.CutPrefix(obj, id); ok {
		return strings.HasPrefix(rest, "@") || rest == ".witness" || rest == ".wtns"
	}
	return false
}

// heartbeat tells the server, each third of the ack wait, that every job
// in hand is still being worked on, so a long proof is not redelivered;
// but no job gets one past JobTimeout in the prover (the ceiling): it is
// timed out instead, and were this worker too stuck to, the server
// redelivers it after the ack wait.
func (w *Worker) heartbeat(ctx context.Context) {
	t := time.NewTicker(max(min(w.q.ackWait/3, w.o.JobTimeout/4), 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		now := time.Now()
		w.mu.Lock()
		msgs := make([]jetstream.Msg, 0, len(w.held))
		var late []*held
		for _, h := range w.held {
			if h.entered && !h.loading && !h.left && !h.answering && now.Sub(h.enteredAt) > w.o.JobTimeout {
				late = append(late, h)
				continue
			}
			msgs = append(msgs, h.msg)
		}
		w.mu.Unlock()
		for _, m := range msgs {
			m.InProgress()
		}
		for _, h := range late {
			w.timeOut(ctx, h)
		}
		w.abandonIfStuck()
	}
}

// answerWait bounds how long a worker waits for the server to take a job's
// answer (ack or terminate). Not the job's context: a stopping worker must
// still answer.
const answerWait = 5 * time.Second

// ack acknowledges h's job and waits until the server has counted it,
// before release frees its slot: with a fire-and-forget ack the pull that
// the freed slot starts could reach the consumer first, which then counted
// capacity + 1 jobs pending on this worker (TestPullsNoMoreThanCapacity saw
// 4 of 3). A failed ack is logged; the job is then redelivered and answered
// from its stored outputs.
func (w *Worker) ack(h *held) {
	ctx, cancel := context.WithTimeout(context.Background(), answerWait)
	defer cancel()
	// (tried again while the consumer's leader is being elected; a lost
	// ack only costs a redelivery, answered from the stored outputs)
	if err := retry(ctx, answerWait, func(ctx context.Context) error { return h.msg.DoubleAck(ctx) }); err != nil {
		w.logf("ack %s: %v", h.id, err)
	}
}

// terminate ends h's job for good with reason, then waits until the server
// has the terminate (it is published without a reply): a worker stopped
// right after answering would otherwise exit with it unsent, and the job,
// answered, would be delivered again.
func (w *Worker) terminate(h *held, reason string) {
	if err := h.msg.TermWithReason(reason); err != nil {
		w.logf("terminate %s: %v", h.id, err)
	}
	if err := w.q.Conn.NC.FlushTimeout(answerWait); err != nil {
		w.logf("terminate %s: flush: %v", h.id, err)
	}
}
