package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// The memory governor's part in zkpipe prove (and demo, bench): the budgets,
// admission through mem.Governor, each result line's memory figures, and a
// status line on stderr. Registered during variable initialisation, like the
// tracing hook, so that cmd_prove.go's init() sees its flags.
var _ = registerProveHook(proveHook{flags: memFlags(), setup: setupMem})

func memFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mem-budget", Value: "75%", Category: "memory", EnvVars: env("mem-budget"),
			Usage: "resident memory (RSS) zkpipe may use: a size (16GiB, 512MiB), a share of the machine's memory " +
				"lowered to its cgroup limit (75%), or off; a job is admitted to synthesize only when its footprint fits. " +
				"Under a budget the Go memory limit follows it and GOGC is 50 unless set in the environment"},
		&cli.StringFlag{Name: "pinned-budget", Value: "25%", Category: "memory", EnvVars: env("pinned-budget"),
			Usage: "page-locked host memory a GPU backend may hold for staging, within --mem-budget: a size, or a share of --mem-budget (of the machine's memory when that is off)"},
		&cli.DurationFlag{Name: "mem-status", Value: time.Second, Category: "memory", EnvVars: env("mem-status"),
			Usage: "print a status line on stderr this often (at least 1s; 0: never): proofs, proofs/s, " +
				"each stage's queued+running jobs, RSS and pinned memory against their budgets"},
	}
}

// memOut receives the status line and the governor's warnings (tests swap it).
var memOut io.Writer = os.Stderr

// pinnedHolder is a backend that holds pinned host memory of its own, taken
// when it opened (gpu.CUDA's bounce buffers); it is charged to the budgets.
type pinnedHolder interface{ PinnedBytes() int }

// pinnedStager is a backend that stages through pinned host buffers lent by
// zkpipe rather than its own: a mem.PinnedPool allocated with the backend's
// allocator and touched once, at start-up, within --pinned-budget.
type pinnedStager interface {
	// PinnedAlloc allocates page-locked host memory (cudaHostAlloc) and
	// returns the function that frees it (cudaFreeHost).
	PinnedAlloc(bytes int) (buf []byte, free func() error, err error)
	// PinnedSlots is the size of one staging buffer and how many the
	// backend can use at once; fewer are given when the budget is short.
	PinnedSlots() (slot, slots int)
	// UsePinned hands the pool over before the first Transfer. The backend
	// takes buffers with Get and gives each back with Put once its copy is
	// done; every one must be back when the stream ends.
	UsePinned(p *mem.PinnedPool)
}

// startPinned allocates the pinned pool of a pinnedStager backend; nil, nil
// for other backends.
func startPinned(g *mem.Governor, b stages.Backend) (*mem.PinnedPool, error) {
	ps, ok := b.(pinnedStager)
	if !ok {
		return nil, nil
	}
	slot, slots := ps.PinnedSlots()
	if slot <= 0 || slots <= 0 {
		return nil, nil
	}
	if budget := g.Stats().PinnedBudget; budget != mem.Unlimited {
		slots = min(slots, int((budget-g.Stats().Pinned)/int64(slot)))
		if slots < 1 {
			return nil, fmt.Errorf("--pinned-budget %s holds no %s staging buffer of the %s backend", mem.FormatBytes(budget), mem.FormatBytes(int64(slot)), b.Name())
		}
	}
	p, err := mem.NewPinnedPool(g, ps.PinnedAlloc, slot, slots)
	if err != nil {
		return nil, fmt.Errorf("%s backend: %w", b.Name(), err)
	}
	ps.UsePinned(p)
	return p, nil
}

// setupMem makes the governor from the flags and hooks it into the run.
func setupMem(c *cli.Context, run *proveRun) (func(), error) {
	machine := mem.ReadMachine()
	budget, err := mem.ParseBudget(c.String("mem-budget"), machine.Limit)
	if err != nil {
		return nil, fmt.Errorf("--mem-budget: %w", err)
	}
	// A pinned share is of the RSS budget, which pinned memory is part of.
	pinnedOf := budget
	if budget == mem.Unlimited {
		pinnedOf = machine.Limit
	}
	pinned, err := mem.ParseBudget(c.String("pinned-budget"), pinnedOf)
	if err != nil {
		return nil, fmt.Errorf("--pinned-budget: %w", err)
	}
	if budget != mem.Unlimited && pinned != mem.Unlimited && pinned > budget {
		return nil, fmt.Errorf("--pinned-budget %s is more than --mem-budget %s: pinned memory is resident, so it counts against both",
			mem.FormatBytes(pinned), mem.FormatBytes(budget))
	}
	cfg := mem.Config{Budget: budget, Pinned: pinned, SetGoLimit: true}
	if budget != mem.Unlimited && os.Getenv("GOGC") == "" {
		// Measured on mulchain 2^16 under a budget for three jobs: GOGC=50
		// halved the minor faults of steady-state proofs and kept peak RSS
		// 20% further under the budget than the default 100 (notes/mem.md).
		cfg.GCPercent = 50
	}
	g := mem.NewGovernor(cfg)
	var holds []*mem.Reservation
	var pool *mem.PinnedPool
	cleanup := func() {
		if err := pool.Close(); err != nil {
			fmt.Fprintf(memOut, "zkpipe: %v\n", err)
		}
		for _, h := range holds {
			h.Close()
		}
		g.Close()
	}
	if ph, ok := run.cfg.Backend.(pinnedHolder); ok && ph.PinnedBytes() > 0 {
		h, err := g.ChargePinned(int64(ph.PinnedBytes()))
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("%s backend: %w", run.cfg.Backend.Name(), err)
		}
		holds = append(holds, h)
	}
	if pool, err = startPinned(g, run.cfg.Backend); err != nil {
		cleanup()
		return nil, err
	}
	run.cfg.Governor = g

	st := &memStatus{g: g, out: memOut, every: c.Duration("mem-status")}
	run.onStart = append(run.onStart, func(p *pipeline.Pipeline[*stages.Job], t0 time.Time) {
		holds = append(holds, chargeResident(g, run.circuits))
		if st.every > 0 {
			fmt.Fprintln(memOut, startLine(g.Stats(), machine, run.circuits))
		}
		st.start(p, t0)
	})
	run.onResult = append(run.onResult, func(r pipeline.Result[*stages.Job], line *stream.Result) {
		res := r.Job.Reservation
		line.ReservedBytes = res.Reserved()
		line.RSSPeakBytes = res.PeakRSS()
		line.MinorFaults = res.MinorFaults()
		st.count(line.Error == "")
	})
	return func() {
		st.stop()
		cleanup()
	}, nil
}

// chargeResident charges what is resident before the first job (the keys
// made resident, the sources' copies of them, the runtime and the binary) as
// the floor every job stands on: the larger of the memory in use then, after
// a collection, and an estimate of the keys alone. It warns when that leaves
// no room for a job.
func chargeResident(g *mem.Governor, circuits []*stages.Circuit) *mem.Reservation {
	runtime.GC() // what loading left behind is not resident state
	u := mem.ReadUsage()
	var keys int64
	for _, c := range circuits {
		keys += keyBytes(c)
	}
	h := g.Charge(max(u.RSS-u.Reusable, keys))
	if b := g.Budget(); b != mem.Unlimited {
		for _, c := range circuits {
			if room := b - g.Stats().Charged; c.Footprint() > room {
				fmt.Fprintf(memOut, "zkpipe: warning: a job of %s needs %s, but the %s memory budget leaves %s beside what is resident; its jobs will fail (raise --mem-budget)\n",
					c.Name, mem.FormatBytes(c.Footprint()), mem.FormatBytes(b), mem.FormatBytes(max(room, 0)))
			}
		}
	}
	return h
}

// keyBytes estimates the host memory of a circuit's resident key: its G1
// bases (A, B₁, K, H: 64 B each), G2 bases (B₂: 128 B), the selections
// (4 B a scalar) and the domain's twiddles and coset tables (about 4n
// elements of 32 B).
func keyBytes(c *stages.Circuit) int64 {
	k := c.Key
	return int64(len(k.A)+len(k.B1)+len(k.K)+len(k.Z))*64 + int64(len(k.B2))*128 +
		int64(len(c.Sel.A)+len(c.Sel.B)+len(c.Sel.K))*4 + 4*int64(k.N())*32
}

// memStatus prints the status line.
type memStatus struct {
	g     *mem.Governor
	out   io.Writer
	every time.Duration

	proved, failed atomic.Int64
	p              *pipeline.Pipeline[*stages.Job]
	t0             time.Time
	quit           chan struct{}
	wg             sync.WaitGroup
}

func (s *memStatus) count(ok bool) {
	if ok {
		s.proved.Add(1)
	} else {
		s.failed.Add(1)
	}
}

// start prints a line every s.every (at least a second) until stop.
func (s *memStatus) start(p *pipeline.Pipeline[*stages.Job], t0 time.Time) {
	if s.every <= 0 || s.quit != nil {
		return
	}
	s.every = max(s.every, time.Second)
	s.p, s.t0, s.quit = p, t0, make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.print()
			case <-s.quit:
				return
			}
		}
	}()
}

// stop ends the ticker and prints a last line.
func (s *memStatus) stop() {
	if s.quit == nil {
		return
	}
	close(s.quit)
	s.wg.Wait()
	s.print()
	s.quit = nil
}

func (s *memStatus) print() {
	fmt.Fprintln(s.out, statusLine(s.proved.Load(), s.failed.Load(), time.Since(s.t0), s.p.Snapshot(), s.g.Sample()))
}

// statusLine is, for example:
//
//	zkpipe: 37 proofs (1 failed) in 15s, 2.47/s | parse 0+1 synthesize 1+1 … assemble 0+0 | rss 3.20 GiB/12.0 GiB (peak 3.51 GiB), resident 1.20 GiB, 2 jobs in (2.10 GiB), 1 waiting | pinned 128 MiB/4.00 GiB
//
// where each stage shows its queued+running jobs.
func statusLine(proved, failed int64, elapsed time.Duration, stages []pipeline.StageCount, m mem.Stats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "zkpipe: %d proofs", proved)
	if failed > 0 {
		fmt.Fprintf(&b, " (%d failed)", failed)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(proved) / elapsed.Seconds()
	}
	fmt.Fprintf(&b, " in %s, %.2f/s |", elapsed.Round(time.Second), rate)
	for _, st := range stages {
		fmt.Fprintf(&b, " %s %d+%d", st.Name, st.Queued, st.Running)
	}
	fmt.Fprintf(&b, " | rss %s/%s (peak %s), resident %s, %d jobs in (%s)", mem.FormatBytes(m.RSS), mem.FormatBytes(m.Budget),
		mem.FormatBytes(m.PeakRSS), mem.FormatBytes(m.Charged), m.Admitted, mem.FormatBytes(m.Reserved))
	if m.Waiting > 0 {
		fmt.Fprintf(&b, ", %d waiting", m.Waiting)
	}
	fmt.Fprintf(&b, " | pinned %s/%s", mem.FormatBytes(m.Pinned), mem.FormatBytes(m.PinnedBudget))
	fmt.Fprintf(&b, " | admitted %d, at most %d at once; %d waited (%s)", m.Granted, m.PeakAdmitted, m.Waits, m.WaitTime.Round(time.Millisecond))
	if m.Forced > 0 {
		fmt.Fprintf(&b, ", %d let in over measured RSS", m.Forced)
	}
	if m.Rejected > 0 {
		fmt.Fprintf(&b, ", %d too large", m.Rejected)
	}
	return b.String()
}

// startLine says what the budgets came to and how many jobs fit, e.g.
//
//	zkpipe: memory budget 12.0 GiB (machine 15.6 GiB, cgroup none), pinned 3.00 GiB; resident at start 3.20 GiB; a job of mulchain reserves 1.46 GiB (5 fit)
func startLine(m mem.Stats, machine mem.Machine, circuits []*stages.Circuit) string {
	var b strings.Builder
	cg := "none"
	if machine.Cgroup > 0 {
		cg = mem.FormatBytes(machine.Cgroup)
	}
	fmt.Fprintf(&b, "zkpipe: memory budget %s (machine %s, cgroup %s), pinned %s; resident at start %s",
		mem.FormatBytes(m.Budget), mem.FormatBytes(machine.Total), cg, mem.FormatBytes(m.PinnedBudget), mem.FormatBytes(m.Charged))
	for _, c := range circuits {
		f := c.Footprint()
		fmt.Fprintf(&b, "; a job of %s reserves %s", c.Name, mem.FormatBytes(f))
		if m.Budget != mem.Unlimited && f > 0 {
			fmt.Fprintf(&b, " (%d fit)", max(m.Budget-m.Charged, 0)/f)
		}
	}
	return b.String()
}
