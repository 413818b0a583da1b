package stages

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/proofdata"
)

// The stages, in order. Names are used for flags (--NAME-workers), result
// lines and trace spans.
const (
	Parse      = "parse"
	Synthesize = "synthesize"
	Transfer   = "transfer" // pin/transfer
	MSMH       = "msm-h"    // NTT+MSM_H
	BatchAdd   = "batch-add"
	TailMSM    = "tail-msm"
	BG2        = "b-g2"
	Assemble   = "assemble"
)

// Names lists the stages in order.
var Names = []string{Parse, Synthesize, Transfer, MSMH, BatchAdd, TailMSM, BG2, Assemble}

// Shape is one stage's concurrency: workers, and the depth of its input queue.
type Shape struct{ Workers, Queue int }

// Config is everything an Engine needs, resolved from flags by the command.
type Config struct {
	Shapes map[string]Shape // per stage; a missing stage gets 1 worker, queue 1
	// MaxWorkers is the most workers a stage may be given while it runs
	// (pipeline.SetWorkers); a missing stage keeps its Shape's workers.
	MaxWorkers map[string]int
	Backend    Backend
	G2         G2Backend // B_G2's device; nil means Backend's if it has one
	Governor   Governor  // nil: no memory governor
	Out        Output
	// TailBatch is the most jobs a tail-msm worker runs at once: it takes
	// a job and up to TailBatch−1 more already waiting in its queue, never
	// waiting for more (pipeline.Stage.Batch); 0 or 1: one at a time.
	TailBatch int
}

// Engine proves streams of jobs for a set of loaded circuits.
type Engine struct {
	cfg Config

	mu       sync.RWMutex // guards circuits: AddCircuit may run while jobs parse
	circuits map[string]*Circuit

	cpu cpuShare // CPU time of each stage run

	loaded     []proofdata.Resident // residents this engine loaded (Close closes them)
	deviceKeys []*mem.Reservation   // their charges on the device budget

	// Reused buffers for the classified queries (pin/transfer), and for
	// the solver's vectors (Job.TakeVectors).
	bitmaps mem.Pool[uint64]
	indexes mem.Pool[uint32]
	scalars mem.Pool[fr.Element]
	vectors vectorPools
	// poolVectors: jobs take the solver's vectors from e.vectors. Only
	// with a backend that stages everything on a device (one that
	// ClassifiesOnTransfer): on the CPU backend gnark-crypto's NTT and MSM
	// scratch is allocated afresh every proof, and under a budget it needs
	// the room that W, a, b, c free once dead. Pooled, they stay out of its
	// reach: mulchain 2^16, three jobs' budget, 16 proofs on the CPU
	// backend, the process took 138–173 thousand minor faults with pooled
	// vectors against 77–110 thousand without (bench/mem-note.sh).
	poolVectors bool
}

// poolLimit is how many buffers of one size each engine pool keeps. A job
// in flight holds up to four of a size (W, a, b, c; or three queries), and
// a stream keeps several jobs in flight: mem.Pool's default of 4 would drop,
// and the next job fault in again, all but one job's worth. A pool keeps no
// more than the most that were in use at once, and the governor counts what
// it keeps idle as reusable.
const poolLimit = 64

// NewEngine checks the circuits and makes their keys resident on the backend.
func NewEngine(cfg Config, circuits ...*Circuit) (*Engine, error) {
	if cfg.Backend == nil || cfg.Out == nil {
		return nil, fmt.Errorf("engine: a backend and an output are required")
	}
	if cfg.G2 == nil {
		cfg.G2 = cfg.Backend
	}
	e := &Engine{cfg: cfg, circuits: make(map[string]*Circuit)}
	e.bitmaps.Limit, e.indexes.Limit, e.scalars.Limit = poolLimit, poolLimit, poolLimit
	e.vectors.vec.Limit, e.vectors.flags.Limit = poolLimit, poolLimit
	e.poolVectors = cfg.Backend.ClassifiesOnTransfer()
	for _, c := range circuits {
		if err := e.AddCircuit(c); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// AddCircuit checks c and makes its keys resident on the backend; jobs may
// name it as soon as it returns. Safe to call while jobs run.
func (e *Engine) AddCircuit(c *Circuit) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.circuits[c.Name]; dup {
		return fmt.Errorf("engine: two circuits named %q", c.Name)
	}
	if err := c.Check(); err != nil {
		return err
	}
	if c.Resident == nil {
		var charge *mem.Reservation
		if g, sz := e.deviceBudget(), e.cfg.Backend.ResidentBytes(c.Key); g != nil && sz > 0 {
			h, err := g.ChargeDevice(sz)
			if err != nil {
				return fmt.Errorf("engine: circuit %s on %s: %w", c.Name, e.cfg.Backend.Name(), err)
			}
			charge = h
		}
		r, err := e.cfg.Backend.Load(c.Key)
		if err != nil {
			charge.Close() // nothing stayed on the device
			return fmt.Errorf("engine: load circuit %s on %s: %w", c.Name, e.cfg.Backend.Name(), err)
		}
		c.Resident = r
		e.loaded = append(e.loaded, r)
		if charge != nil {
			e.deviceKeys = append(e.deviceKeys, charge)
		}
	}
	e.circuits[c.Name] = c
	return nil
}

// Circuit resolves a job's circuit name: the loaded circuit of that name,
// or, for an empty name, the only one loaded.
func (e *Engine) Circuit(name string) (*Circuit, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if name != "" {
		c, ok := e.circuits[name]
		if !ok {
			return nil, fmt.Errorf("unknown circuit %q (loaded: %v)", name, e.circuitNames())
		}
		return c, nil
	}
	if len(e.circuits) == 1 {
		for _, c := range e.circuits {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no circuit named, and %d are loaded: %v", len(e.circuits), e.circuitNames())
}

// Circuits lists the loaded circuits, by name.
func (e *Engine) Circuits() []*Circuit {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]*Circuit, 0, len(e.circuits))
	for _, n := range e.circuitNames() {
		out = append(out, e.circuits[n])
	}
	return out
}

// Close frees the residents this engine loaded (circuits that came with a
// Resident are the caller's) and gives back their device charges. Call it
// after Run has returned; the backend itself is the caller's to close.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var err error
	for _, c := range e.circuits {
		for _, r := range e.loaded {
			if c.Resident == r {
				c.Resident = nil
			}
		}
	}
	for _, r := range e.loaded {
		err = errors.Join(err, r.Close())
	}
	for _, h := range e.deviceKeys {
		h.Close()
	}
	e.loaded, e.deviceKeys = nil, nil
	return err
}

// CircuitNames lists the loaded circuits.
func (e *Engine) CircuitNames() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.circuitNames()
}

func (e *Engine) circuitNames() []string {
	var out []string
	for n := range e.circuits {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Pipeline builds the eight stages over e's configuration.
func (e *Engine) Pipeline() *pipeline.Pipeline[*Job] {
	shape := func(name string) Shape {
		s, ok := e.cfg.Shapes[name]
		if !ok {
			return Shape{Workers: 1, Queue: 1}
		}
		return Shape{Workers: max(s.Workers, 1), Queue: max(s.Queue, 0)}
	}
	stage := func(name string, run func(context.Context, *Job) error) pipeline.Stage[*Job] {
		s := shape(name)
		return pipeline.Stage[*Job]{Name: name, Workers: s.Workers, Queue: s.Queue, MaxWorkers: max(e.cfg.MaxWorkers[name], s.Workers),
			Run: func(ctx context.Context, j *Job, _ int) error {
				ctx, stop := jobContext(ctx, j)
				defer stop()
				if err := ctx.Err(); err != nil {
					return err
				}
				r := e.cpu.start()
				defer func() { j.addCPU(name, e.cpu.end(r)) }()
				return run(ctx, j)
			}}
	}
	synth := stage(Synthesize, e.synthesize)
	synth.Admit = admitUnder(e.admit)
	xfer := stage(Transfer, e.transfer)
	xfer.Admit = admitUnder(e.admitDevice)
	tail := stage(TailMSM, e.tailMSM)
	if e.cfg.TailBatch > 1 {
		tail.Batch = e.cfg.TailBatch
		tail.RunBatch = func(ctx context.Context, jobs []*Job, _ int) []error {
			// one CPU share a job: the batch's CPU time splits evenly among them
			runs := make([]*cpuRun, len(jobs))
			for i := range jobs {
				runs[i] = e.cpu.start()
			}
			defer func() {
				for i, j := range jobs {
					j.addCPU(TailMSM, e.cpu.end(runs[i]))
				}
			}()
			return e.tailMSMBatch(ctx, jobs)
		}
	}
	p := pipeline.New(
		stage(Parse, e.parse),
		synth,
		xfer,
		stage(MSMH, e.msmH),
		stage(BatchAdd, e.batchAdd),
		tail,
		stage(BG2, e.bG2),
		stage(Assemble, e.assemble),
	)
	// A job that cancellation keeps from the sink still hands back its
	// device buffers and memory reservation.
	p.Drop = e.release
	return p
}

// jobContext is ctx, ended too by j.Ctx when the job has one; stop
// releases what joining them took.
func jobContext(ctx context.Context, j *Job) (context.Context, func()) {
	if j.Ctx == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(j.Ctx, func() { cancel(context.Cause(j.Ctx)) })
	return ctx, func() { unhook(); cancel(nil) }
}

// admitUnder runs admit under the job's own context too: a Prove whose
// caller gave up must not wait for memory.
func admitUnder(admit func(context.Context, *Job) error) func(context.Context, *Job) error {
	return func(ctx context.Context, j *Job) error {
		ctx, stop := jobContext(ctx, j)
		defer stop()
		return admit(ctx, j)
	}
}

// Run proves every job from jobs and calls sink once per job, finished or
// failed, after handing back everything the job held. See pipeline.Run.
func (e *Engine) Run(ctx context.Context, p *pipeline.Pipeline[*Job], jobs <-chan *Job, sink func(pipeline.Result[*Job])) error {
	return p.Run(ctx, jobs, func(r pipeline.Result[*Job]) {
		e.release(r.Job)
		if r.Err != nil {
			r.Err = fmt.Errorf("job %s: %s: %w", r.Job.ID, r.Stage, r.Err)
		}
		sink(r)
	})
}

// release hands back whatever j still holds; safe to call more than once.
func (e *Engine) release(j *Job) {
	e.putQuery(&j.Vec.QA)
	e.putQuery(&j.Vec.QB)
	e.putQuery(&j.Vec.QK)
	if j.Staged != nil {
		e.cfg.Backend.Free(j.Staged)
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
