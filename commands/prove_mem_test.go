package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/syncbuf"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

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
	var status syncbuf.Buffer
	args := append([]string{"zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobsFile,
		"--out", filepath.Join(root, "out"), "--results", results}, flags...)
	lines := runProveTo(t, &status, results, args...)
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
		err := App().Run(args)
		if err == nil || !strings.Contains(err.Error(), "budget") {
			t.Errorf("%v: err = %v, want a budget error", c.flags, err)
		}
	}
}
