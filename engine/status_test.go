package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/stream"
)

func TestStatusLine(t *testing.T) {
	got := statusLine(37, 1, 15*time.Second, []pipeline.StageCount{{Name: "parse", Queued: 0, Running: 1}, {Name: "msm-h", Queued: 2, Running: 1}},
		mem.Stats{Budget: 12 << 30, PinnedBudget: 4 << 30, RSS: 3 << 30, PeakRSS: 7 << 29, Reusable: 512 << 20, Charged: 1 << 30, Pinned: 128 << 20,
			Admitted: 2, Reserved: 2 << 30, Waiting: 1, Granted: 40, PeakAdmitted: 3, Waits: 12, WaitTime: 3200 * time.Millisecond, Forced: 2})
	want := "zkpipe: 37 proofs (1 failed) in 15s, 2.47/s | parse 0+1 msm-h 2+1 | rss 3.00 GiB/12.0 GiB (peak 3.50 GiB), 512 MiB reusable, resident 1.00 GiB, " +
		"2 jobs in (2.00 GiB), 1 waiting | pinned 128 MiB/4.00 GiB | admitted 40, at most 3 at once; 12 waited (3.2s), 2 let in over measured RSS"
	if got != want {
		t.Errorf("status line\n got %s\nwant %s", got, want)
	}
}

// stagingCPU is the CPU backend posing as one that stages through lent
// pinned buffers, with Go memory standing in for cudaHostAlloc.
type stagingCPU struct {
	*gpu.CPU
	slot, slots int
	live        int
	pool        *mem.PinnedPool
}

func (s *stagingCPU) PinnedAlloc(n int) ([]byte, func() error, error) {
	s.live++
	return make([]byte, n), func() error { s.live--; return nil }, nil
}
func (s *stagingCPU) PinnedSlots() (int, int)     { return s.slot, s.slots }
func (s *stagingCPU) UsePinned(p *mem.PinnedPool) { s.pool = p }

func TestPinnedPoolForAStagingBackend(t *testing.T) {
	g := mem.NewGovernor(mem.Config{Budget: 64 << 20, Pinned: 10 << 20})
	b := &stagingCPU{CPU: gpu.NewCPU(1, 1), slot: 4 << 20, slots: 4}
	p, err := startPinned(g, b)
	if err != nil {
		t.Fatal(err)
	}
	// 10 MiB of pinned budget holds two of the four 4 MiB buffers wanted
	if b.pool != p || p.Slots() != 2 || b.live != 2 || g.Stats().Pinned != 8<<20 {
		t.Fatalf("pool %v of %d slots, %d live, pinned %d", p, p.Slots(), b.live, g.Stats().Pinned)
	}
	if err := p.Close(); err != nil || b.live != 0 || g.Stats().Pinned != 0 {
		t.Fatalf("close: %v, %d live, pinned %d", err, b.live, g.Stats().Pinned)
	}
	b.slot = 16 << 20
	if _, err := startPinned(g, b); err == nil || !strings.Contains(err.Error(), "engine.Options.Memory.Pinned 10.0 MiB holds no 16.0 MiB staging buffer") {
		t.Fatalf("a buffer over the budget: %v", err)
	}
	if p, err := startPinned(g, gpu.NewCPU(1, 1)); p != nil || err != nil {
		t.Fatalf("plain CPU backend: %v, %v", p, err)
	}
}

// A run whose backend pins nothing (CPU alone) shows no pinned memory on
// its status line; one that pins shows it against its budget.
func TestStatusLinePinnedOnlyWhenPinning(t *testing.T) {
	st := []pipeline.StageCount{{Name: "parse", Queued: 0, Running: 1}}
	cpu := statusLine(3, 0, time.Second, st, mem.Stats{Budget: 12 << 30, PinnedBudget: 4530 << 20, RSS: 1 << 30})
	if strings.Contains(cpu, "pinned") {
		t.Errorf("CPU-only status line shows pinned memory: %s", cpu)
	}
	pinning := statusLine(3, 0, time.Second, st, mem.Stats{Budget: 12 << 30, PinnedBudget: 4 << 30, RSS: 1 << 30, Pinned: 256 << 20})
	if !strings.Contains(pinning, " | pinned 256 MiB/4.00 GiB") {
		t.Errorf("status line of a pinning backend: %s", pinning)
	}
	machine := mem.Machine{Total: 16 << 30}
	if l := startLine(mem.Stats{Budget: 12 << 30, PinnedBudget: 4530 << 20}, machine, nil); strings.Contains(l, "pinned") {
		t.Errorf("CPU-only start line shows a pinned budget: %s", l)
	}
	if l := startLine(mem.Stats{Budget: 12 << 30, PinnedBudget: 4 << 30, Pinned: 256 << 20}, machine, nil); !strings.Contains(l, "(machine 16.0 GiB, cgroup none), pinned 4.00 GiB; resident at start") {
		t.Errorf("start line of a pinning backend: %s", l)
	}
	// the CPU backend's governor: nothing pinned, nothing shown
	g := mem.NewGovernor(mem.Config{Budget: 64 << 20, Pinned: 10 << 20})
	if p, err := startPinned(g, gpu.NewCPU(1, 1)); p != nil || err != nil {
		t.Fatalf("CPU backend pinned %v, %v", p, err)
	}
	if l := statusLine(0, 0, 0, nil, g.Stats()); strings.Contains(l, "pinned") {
		t.Errorf("CPU governor's status line: %s", l)
	}
}

// A status line is due at the first tick, at every tick while jobs are in
// flight, when something moved since the last line, and a minute after the
// last one when nothing moves: not every second of an idle service.
func TestStatusDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	idle, _ := statusState(3, 0, []pipeline.StageCount{{Name: "parse", Workers: 1}}, mem.Stats{Granted: 3})
	moved, _ := statusState(4, 0, []pipeline.StageCount{{Name: "parse", Workers: 1}}, mem.Stats{Granted: 4})
	_, busy := statusState(3, 0, []pipeline.StageCount{{Name: "parse", Running: 1, Workers: 1}}, mem.Stats{Granted: 3})
	_, admitted := statusState(3, 0, nil, mem.Stats{Admitted: 1})
	if !busy || !admitted {
		t.Fatalf("a job in a stage (%v) or admitted (%v) is not in flight", busy, admitted)
	}
	last := statusPrinted{at: t0, key: idle, any: true}
	for _, c := range []struct {
		what string
		p    statusPrinted
		at   time.Duration
		key  string
		busy bool
		want bool
	}{
		{"the first tick", statusPrinted{}, time.Second, idle, false, true},
		{"idle, a second later", last, time.Second, idle, false, false},
		{"idle, 59 s later", last, 59 * time.Second, idle, false, false},
		{"idle, a minute later", last, time.Minute, idle, false, true},
		{"a proof since", last, time.Second, moved, false, true},
		{"jobs in flight", last, time.Second, idle, true, true},
	} {
		if got := c.p.due(t0.Add(c.at), c.key, c.busy); got != c.want {
			t.Errorf("%s: due %v, want %v", c.what, got, c.want)
		}
	}
}

// An idle Run prints its status line once, then again only when a job
// moves it: not at every tick (--mem-status 1s printed one a second, 322
// identical lines in 6 minutes of an idle serve).
func TestIdleStatusLineOnChange(t *testing.T) {
	o := cpuOptions(t.TempDir())
	o.Memory.Status = time.Second
	var log lockedLog
	o.Log = &log
	e, err := New(context.Background(), o, loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	jobs := make(chan stream.Line)
	results := make(chan stream.Result, 1)
	done := make(chan error, 1)
	go func() {
		done <- e.Run(context.Background(), jobs, func(r stream.Result) error { results <- r; return nil })
	}()
	// three ticks or more, idle
	time.Sleep(3500 * time.Millisecond)
	if n := log.statusLines(); n > 1 {
		t.Errorf("%d status lines in 3.5 s of an idle run with a tick a second, want 1:\n%s", n, log.String())
	}
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "a", Generate: &stream.Generate{Seed: 1}}}
	if r := <-results; r.Error != "" {
		t.Fatal(r.Error)
	}
	before := log.statusLines()
	time.Sleep(3500 * time.Millisecond)
	if n := log.statusLines() - before; n > 1 {
		t.Errorf("%d status lines in the 3.5 s after a job, want at most 1 (the one saying it proved):\n%s", n, log.String())
	}
	close(jobs)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "zkpipe: 1 proofs") {
		t.Errorf("no status line says the job proved:\n%s", log.String())
	}
}

// lockedLog is a log the engine's goroutines write to at once.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// statusLines counts the status lines written so far.
func (l *lockedLog) statusLines() int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.HasPrefix(line, "zkpipe: ") && strings.Contains(line, " proofs") && strings.Contains(line, " | rss ") {
			n++
		}
	}
	return n
}
