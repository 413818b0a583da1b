package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
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
