package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// lockedBuffer is a bytes.Buffer safe for the status goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proveJobs runs zkpipe prove over dir with n generated jobs and extra flags,
// returning the result lines and what went to the status output.
func proveJobs(t *testing.T, dir string, n int, flags ...string) ([]stream.Result, string) {
	t.Helper()
	root := t.TempDir()
	var jobs strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&jobs, `{"id":"j%d","generate":{"seed":%d}}`+"\n", i, i)
	}
	jobsFile, results := filepath.Join(root, "jobs.jsonl"), filepath.Join(root, "results.jsonl")
	if err := os.WriteFile(jobsFile, []byte(jobs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var status lockedBuffer
	memOut = &status
	defer func() { memOut = os.Stderr }()
	args := append([]string{"zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobsFile,
		"--out", filepath.Join(root, "out"), "--results", results}, flags...)
	lines := runProve(t, results, args...)
	if len(lines) != n {
		t.Fatalf("%d result lines for %d jobs", len(lines), n)
	}
	return lines, status.String()
}

func TestProveReportsMemoryPerJob(t *testing.T) {
	dir := setupCircuit(t, t.TempDir(), "chain", "mulchain", 300)
	circ, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	lines, status := proveJobs(t, dir, 4, "--mem-budget", "2GiB", "--synthesize-workers", "2")
	var faults int64
	for _, l := range lines {
		if l.Error != "" {
			t.Fatalf("job %s: %s", l.ID, l.Error)
		}
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Errorf("job %s: gnark rejects the proof: %v", l.ID, err)
		}
		if l.ReservedBytes != circ.Footprint() || l.RSSPeakBytes <= 0 || l.MinorFaults < 0 {
			t.Errorf("job %s: reserved %d (footprint %d), rss peak %d, faults %d", l.ID, l.ReservedBytes, circ.Footprint(), l.RSSPeakBytes, l.MinorFaults)
		}
		faults += l.MinorFaults
	}
	if faults <= 0 {
		t.Error("no minor faults attributed to any job")
	}
	first := strings.SplitN(status, "\n", 2)[0]
	for _, want := range []string{"memory budget 2.00 GiB", "resident at start", "a job of chain reserves " + mem.FormatBytes(circ.Footprint())} {
		if !strings.Contains(first, want) {
			t.Errorf("start line %q does not say %q", first, want)
		}
	}
	// the last line, printed as the stream ends, has the final counts
	last := status[strings.LastIndex(strings.TrimSpace(status), "\n")+1:]
	for _, want := range []string{"zkpipe: 4 proofs", "/2.00 GiB", "admitted 4", "synthesize 0+0"} {
		if !strings.Contains(last, want) {
			t.Errorf("status %q does not say %q", last, want)
		}
	}
}

func TestProveWithTooSmallBudgetFailsEachJobClearly(t *testing.T) {
	dir := setupCircuit(t, t.TempDir(), "chain", "mulchain", 300)
	start := time.Now()
	lines, status := proveJobs(t, dir, 3, "--mem-budget", "1MiB", "--mem-status", "0")
	for _, l := range lines {
		for _, want := range []string{"admission", "1.00 MiB memory budget", "raise --mem-budget"} {
			if !strings.Contains(l.Error, want) {
				t.Errorf("job %s: error %q does not say %q", l.ID, l.Error, want)
			}
		}
	}
	if !strings.Contains(status, "warning: a job of chain needs") {
		t.Errorf("no warning at start: %q", status)
	}
	if time.Since(start) > time.Minute {
		t.Errorf("rejecting 3 jobs took %v", time.Since(start))
	}
}

func TestMemoryFlagErrors(t *testing.T) {
	dir := setupCircuit(t, t.TempDir(), "chain", "mulchain", 100)
	for _, c := range []struct{ flags []string }{
		{[]string{"--mem-budget", "0"}},
		{[]string{"--mem-budget", "75"}},
		{[]string{"--mem-budget", "150%"}},
		{[]string{"--mem-budget", "1GiB", "--pinned-budget", "2GiB"}},
		{[]string{"--pinned-budget", "lots"}},
	} {
		args := append([]string{"zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", os.DevNull, "--out", t.TempDir()}, c.flags...)
		err := newApp().Run(args)
		if err == nil || !strings.Contains(err.Error(), "budget") {
			t.Errorf("%v: err = %v, want a budget error", c.flags, err)
		}
	}
}

func TestStatusLine(t *testing.T) {
	got := statusLine(37, 1, 15*time.Second, []pipeline.StageCount{{Name: "parse", Queued: 0, Running: 1}, {Name: "msm-h", Queued: 2, Running: 1}},
		mem.Stats{Budget: 12 << 30, PinnedBudget: 4 << 30, RSS: 3 << 30, PeakRSS: 7 << 29, Charged: 1 << 30, Pinned: 128 << 20,
			Admitted: 2, Reserved: 2 << 30, Waiting: 1, Granted: 40, PeakAdmitted: 3, Waits: 12, WaitTime: 3200 * time.Millisecond, Forced: 2})
	want := "zkpipe: 37 proofs (1 failed) in 15s, 2.47/s | parse 0+1 msm-h 2+1 | rss 3.00 GiB/12.0 GiB (peak 3.50 GiB), resident 1.00 GiB, " +
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
	if _, err := startPinned(g, b); err == nil || !strings.Contains(err.Error(), "--pinned-budget 10.0 MiB holds no 16.0 MiB staging buffer") {
		t.Fatalf("a buffer over the budget: %v", err)
	}
	if p, err := startPinned(g, gpu.NewCPU(1, 1)); p != nil || err != nil {
		t.Fatalf("plain CPU backend: %v, %v", p, err)
	}
}
