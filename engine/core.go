package engine

// The engine's proving core (issue 47: once package engine/core): the
// circuits it has loaded, the buffers it pools between jobs, the stages
// assembled into one pipeline over a backend with the CPU time of each
// attributed, and each job's result line, built once. Engine opens what the
// core runs on (backends, governor, output directory, tracing), feeds it
// jobs and drives it; tests (internal/runtest) drive it over backends of
// their own (NewCore).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// CoreConfig is everything a Core needs, resolved by the engine (or a test).
type CoreConfig struct {
	Shapes map[string]stages.Shape // per stage; a missing stage gets 1 worker, queue 1
	// MaxWorkers is the most workers a stage may be given while it runs
	// (pipeline.SetWorkers); a missing stage keeps its Shape's workers.
	MaxWorkers map[string]int
	Backend    stages.Backend
	G2         stages.G2Backend // B_G2's device; nil means Backend
	// Governor admits jobs under the memory budgets (synthesize waits for
	// room, and with a device budget so does pin/transfer); nil: none.
	Governor *mem.Governor
	Out      stages.Output
	// TailBatch is the most jobs a tail-msm worker runs at once: it takes
	// a job and up to TailBatch−1 more already waiting in its queue, never
	// waiting for more (pipeline.Stage.Batch); 0 or 1: one at a time.
	TailBatch int
	// HostFault tells a failure of the host (its disk, its GPU) from one of
	// the job, for the result line's retryable; nil: none is.
	HostFault func(error) bool
	// KeepHostKeys keeps every part of a loaded key's host copy. Without
	// it, once a circuit's key is resident, the parts no stage reads there
	// any more are dropped (stages.Steps.HostKey, proofdata.Key.Drop): on
	// a GPU, all the bases and the domain's tables; with B_G2 on the CPU,
	// all but B₂. Set it when something reads the key after, such as
	// gnark's own prover or a second engine on the CPU.
	KeepHostKeys bool
}

// Core proves streams of jobs for a set of loaded circuits.
type Core struct {
	cfg   CoreConfig
	steps stages.Steps

	mu       sync.RWMutex // guards circuits: AddCircuit may run while jobs parse
	circuits map[string]*stages.Circuit

	cpu cpuShare // CPU time of each stage run

	loaded     []proofdata.Resident // residents this prover loaded (Close closes them)
	deviceKeys []*mem.Reservation   // their charges on the device budget

	// Reused buffers for the classified queries (pin/transfer), and for
	// the solver's vectors (Job.TakeVectors), on every backend. The CPU
	// backend left the vectors unpooled while gnark-crypto's MSM scratch
	// was allocated afresh every proof and needed the room W, a, b, c free
	// once dead; its MSMs keep their scratch now (cpumsm), and pooled
	// vectors take BN254 mulchain 2^16's steady faults a proof (serial, 16
	// proofs) from 835 to 66 by the median, 1,243 to 258 by the mean
	// (notes/cpu-faults.md).
	queries, vectors pools
}

// NewCore checks the circuits and makes their keys resident on the backend.
func NewCore(cfg CoreConfig, circuits ...*stages.Circuit) (*Core, error) {
	if cfg.Backend == nil || cfg.Out == nil {
		return nil, fmt.Errorf("engine: a backend and an output are required")
	}
	if cfg.G2 == nil {
		cfg.G2 = cfg.Backend
	}
	p := &Core{cfg: cfg, circuits: make(map[string]*stages.Circuit)}
	p.queries.setLimit(poolLimit)
	p.vectors.setLimit(poolLimit)
	p.steps = stages.Steps{Backend: cfg.Backend, G2: cfg.G2, Out: cfg.Out, Buffers: &p.queries}
	for _, c := range circuits {
		if err := p.AddCircuit(c); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// AddCircuit checks c and makes its keys resident on the backend; jobs may
// name it as soon as it returns. Safe to call while jobs run.
func (p *Core) AddCircuit(c *stages.Circuit) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.circuits[c.Name]; dup {
		return fmt.Errorf("engine: two circuits named %q", c.Name)
	}
	if err := c.Check(); err != nil {
		return err
	}
	if c.Resident == nil {
		var charge *mem.Reservation
		if g, sz := p.cfg.Governor, p.cfg.Backend.ResidentBytes(c.Key); g != nil && sz > 0 {
			h, err := g.ChargeDevice(sz)
			if err != nil {
				return fmt.Errorf("engine: circuit %s on %s: %w", c.Name, p.cfg.Backend.Name(), err)
			}
			charge = h
		}
		// bases the backend streams from pinned host memory (gpu.CUDA's
		// BasesOnHost) are held there for the run: charged as pinned
		if g, sz := p.cfg.Governor, p.cfg.Backend.PinnedKeyBytes(c.Key); g != nil && sz > 0 {
			h, err := g.ChargePinned(sz)
			if err != nil {
				charge.Close()
				return fmt.Errorf("engine: circuit %s's bases in pinned host memory on %s: %w", c.Name, p.cfg.Backend.Name(), err)
			}
			p.deviceKeys = append(p.deviceKeys, h)
		}
		// the host's parts first: a B_G2 on the CPU beside a GPU reads B₂
		// there; the backend's Load reads or streams the rest (a key file's
		// bases unread until now: proofdata.DeferredParts)
		if err := c.Key.Need(p.steps.HostKey(c.Key)); err != nil {
			charge.Close()
			return fmt.Errorf("engine: load circuit %s: %w", c.Name, err)
		}
		r, err := p.cfg.Backend.Load(c.Key)
		if errors.Is(err, errors.ErrUnsupported) && p.cfg.Backend.Name() != "cpu" {
			charge.Close()
			return fmt.Errorf("engine: load circuit %s (%s) on %s: %w; the CPU backend proves it (engine.Options.Device cpu)", c.Name, c.Curve(), p.cfg.Backend.Name(), err)
		}
		if err != nil {
			charge.Close() // nothing stayed on the device
			return fmt.Errorf("engine: load circuit %s on %s: %w", c.Name, p.cfg.Backend.Name(), err)
		}
		c.Resident = r
		p.loaded = append(p.loaded, r)
		if !p.cfg.KeepHostKeys {
			// the device holds them now: a second copy on the host would
			// double the key's memory (a 2^25 key's 5.5 GiB of bases and
			// 4 GiB of domain tables on the H200)
			c.Key.Drop(p.steps.HostKey(c.Key))
		}
		if charge != nil {
			p.deviceKeys = append(p.deviceKeys, charge)
		}
	}
	c.Host = p.steps.HostUse()
	p.circuits[c.Name] = c
	return nil
}

// Circuit resolves a job's circuit name: the loaded circuit of that name,
// or, for an empty name, the only one loaded.
func (p *Core) Circuit(name string) (*stages.Circuit, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if name != "" {
		c, ok := p.circuits[name]
		if !ok {
			return nil, fmt.Errorf("unknown circuit %q (loaded: %v)", name, p.circuitNames())
		}
		return c, nil
	}
	if len(p.circuits) == 1 {
		for _, c := range p.circuits {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no circuit named, and %d are loaded: %v", len(p.circuits), p.circuitNames())
}

// Circuits lists the loaded circuits, by name.
func (p *Core) Circuits() []*stages.Circuit {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]*stages.Circuit, 0, len(p.circuits))
	for _, n := range p.circuitNames() {
		out = append(out, p.circuits[n])
	}
	return out
}

// Close frees the residents this prover loaded (circuits that came with a
// Resident are the caller's) and gives back their device charges. Call it
// after Run has returned; the backend itself is the caller's to close.
func (p *Core) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	for _, c := range p.circuits {
		for _, r := range p.loaded {
			if c.Resident == r {
				c.Resident = nil
			}
		}
	}
	for _, r := range p.loaded {
		err = errors.Join(err, r.Close())
	}
	for _, h := range p.deviceKeys {
		h.Close()
	}
	p.loaded, p.deviceKeys = nil, nil
	return err
}

// CircuitNames lists the loaded circuits.
func (p *Core) CircuitNames() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.circuitNames()
}

func (p *Core) circuitNames() []string {
	var out []string
	for n := range p.circuits {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ─── pipeline assembly ───────────────────────────────────────────────────────

// Pipeline builds the eight stages over p's configuration: each stage's
// step under the job's own context, its CPU time attributed, and the two
// admissions (memory before synthesize, device memory before pin/transfer).
// reads (nil: none) bounds the reads of the jobs' input files beside the
// stage's context (parse runs under both): the engine ends it a few seconds
// after a run's intake stops, so that a FIFO nobody writes to cannot hold a
// drain up until its read timeout.
func (p *Core) Pipeline(reads context.Context) *pipeline.Pipeline[*stages.Job] {
	shape := func(name string) stages.Shape {
		s, ok := p.cfg.Shapes[name]
		if !ok {
			return stages.Shape{Workers: 1, Queue: 1}
		}
		return stages.Shape{Workers: max(s.Workers, 1), Queue: max(s.Queue, 0)}
	}
	stage := func(name string, run func(context.Context, *stages.Job) error) pipeline.Stage[*stages.Job] {
		s := shape(name)
		return pipeline.Stage[*stages.Job]{Name: name, Workers: s.Workers, Queue: s.Queue, MaxWorkers: max(p.cfg.MaxWorkers[name], s.Workers),
			Run: func(ctx context.Context, j *stages.Job, _ int) error {
				ctx, stop := jobContext(ctx, j)
				defer stop()
				if err := ctx.Err(); err != nil {
					return err
				}
				r := p.cpu.start()
				defer func() { addCPU(j, name, p.cpu.end(r)) }()
				return run(ctx, j)
			}}
	}
	st := &p.steps
	synth := stage(stages.Synthesize, st.Synthesize)
	synth.Admit = admitUnder(p.admit)
	xfer := stage(stages.Transfer, st.Transfer)
	xfer.Admit = admitUnder(p.admitDevice)
	tail := stage(stages.TailMSM, st.TailMSM)
	if p.cfg.TailBatch > 1 {
		tail.Batch = p.cfg.TailBatch
		tail.RunBatch = func(ctx context.Context, jobs []*stages.Job, _ int) []error {
			// one CPU share a job: the batch's CPU time splits evenly among them
			runs := make([]*cpuRun, len(jobs))
			for i := range jobs {
				runs[i] = p.cpu.start()
			}
			defer func() {
				for i, j := range jobs {
					addCPU(j, stages.TailMSM, p.cpu.end(runs[i]))
				}
			}()
			return st.TailMSMBatch(ctx, jobs)
		}
	}
	pl := pipeline.New(
		stage(stages.Parse, func(ctx context.Context, j *stages.Job) error { return p.parse(ctx, j, reads) }),
		synth,
		xfer,
		stage(stages.MSMH, st.MSMH),
		stage(stages.BatchAdd, st.BatchAdd),
		tail,
		stage(stages.BG2, st.BG2),
		stage(stages.Assemble, st.Assemble),
	)
	// A job that cancellation keeps from the sink still hands back its
	// device buffers and memory reservation.
	pl.Drop = st.Release
	return pl
}

// parse resolves the job's circuit in the registry, lends it the vector
// pools, and runs the parse step, under reads too where there is one.
func (p *Core) parse(ctx context.Context, j *stages.Job, reads context.Context) error {
	if reads != nil {
		// ends with either: a drain must not wait on a FIFO
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		defer context.AfterFunc(reads, func() { cancel(context.Cause(reads)) })()
	}
	if j.Err == nil {
		j.Buffers = &p.vectors
		if j.Circuit == nil {
			c, err := p.Circuit(j.Request.Circuit)
			if err != nil {
				return err
			}
			j.Circuit = c
		}
	}
	return p.steps.Parse(ctx, j)
}

// admit reserves the job's footprint with the memory governor before its
// vectors exist; waiting here pushes back on parse.
func (p *Core) admit(ctx context.Context, j *stages.Job) error {
	if p.cfg.Governor == nil || j.Circuit == nil {
		return nil
	}
	r, err := p.cfg.Governor.Admit(ctx, j.ID, j.Circuit.Footprint())
	if err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	j.Reservation = r
	return nil
}

// admitDevice reserves the job's device footprint (Backend.JobBytes)
// before pin/transfer stages its vectors there; waiting here pushes back
// on synthesize. Nothing is reserved without a device budget, or on a
// backend with no memory of its own. On a backend that stages on its
// device, the job's queries are held there in room for their tails, which
// W's significant scalars bound (proofdata.Vectors.Tail): counted here.
func (p *Core) admitDevice(ctx context.Context, j *stages.Job) error {
	if j.Circuit == nil {
		return nil
	}
	if p.cfg.Backend.StagesOnDevice() && j.W != nil {
		j.Vec.Tail = proofdata.CountSignificant(j.W, proofdata.One(j.Circuit.Key.Curve), runtime.GOMAXPROCS(0))
	}
	if p.cfg.Governor == nil {
		return nil
	}
	bytes := p.cfg.Backend.JobBytes(j.Circuit.Key, j.Vec.Tail)
	if bytes == 0 {
		return nil
	}
	r, err := p.cfg.Governor.AdmitDevice(ctx, j.ID, bytes)
	if err != nil {
		return fmt.Errorf("device admission: %w", err)
	}
	j.DeviceReservation = r
	return nil
}

// jobContext is ctx, ended too by j.Ctx when the job has one; stop
// releases what joining them took.
func jobContext(ctx context.Context, j *stages.Job) (context.Context, func()) {
	if j.Ctx == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(j.Ctx, func() { cancel(context.Cause(j.Ctx)) })
	return ctx, func() { unhook(); cancel(nil) }
}

// admitUnder runs admit under the job's own context too: a Prove whose
// caller gave up must not wait for memory.
func admitUnder(admit func(context.Context, *stages.Job) error) func(context.Context, *stages.Job) error {
	return func(ctx context.Context, j *stages.Job) error {
		ctx, stop := jobContext(ctx, j)
		defer stop()
		return admit(ctx, j)
	}
}

// ─── running ─────────────────────────────────────────────────────────────────

// CoreResult is one finished (or failed) job: the pipeline's record of it and
// its result line.
type CoreResult struct {
	pipeline.Result[*stages.Job]
	Line stream.Result
}

// Run proves every job from jobs on pl (from Pipeline) and calls sink once
// per job, finished or failed, after handing back everything the job held.
// Result lines time their stages from Run's start. See pipeline.Run.
func (p *Core) Run(ctx context.Context, pl *pipeline.Pipeline[*stages.Job], jobs <-chan *stages.Job, sink func(CoreResult)) error {
	t0 := time.Now()
	return pl.Run(ctx, jobs, func(r pipeline.Result[*stages.Job]) {
		if r.Err != nil {
			r.Err = fmt.Errorf("job %s: %s: %w", r.Job.ID, r.Stage, r.Err)
		}
		p.steps.Release(r.Job)
		line := p.resultLine(r, t0)
		sink(CoreResult{Result: r, Line: line})
	})
}
