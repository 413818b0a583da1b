package commands

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/internal/zkpipebin"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

func binary(t *testing.T) string {
	t.Helper()
	return zkpipebin.Path(t, "runs it as a process")
}

func writeJobs(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func generateJobs(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf(`{"id":"j%d","generate":{"seed":%d}}`, i, i))
	}
	return out
}

// exitCode runs cmd and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

func TestExitCodes(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	good, mixed := filepath.Join(root, "good.jsonl"), filepath.Join(root, "mixed.jsonl")
	writeJobs(t, good, generateJobs(2)...)
	writeJobs(t, mixed, `{"id":"ok","generate":{"seed":1}}`, `{"id":"bad","witness":"/no/such/file"}`)
	run := func(jobs string, extra ...string) int {
		args := append([]string{"prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs,
			"--out", filepath.Join(root, "out"), "--results", filepath.Join(root, "r.jsonl")}, extra...)
		return exitCode(t, exec.Command(bin, args...))
	}
	for _, c := range []struct {
		name string
		got  int
		want int
	}{
		{"every job proven", run(good), ExitOK},
		{"a job failed", run(mixed), ExitJobsFailed},
		{"bad flag", run(good, "--synthesize-workers", "0"), ExitRunFailed},
	} {
		if c.got != c.want {
			t.Errorf("%s: exit code %d, want %d", c.name, c.got, c.want)
		}
	}
}

// A run that cannot start (a misspelled --circuit) leaves --results as it
// was.
func TestResultsUntouchedWhenTheRunCannotStart(t *testing.T) {
	root := t.TempDir()
	results := filepath.Join(root, "old.jsonl")
	if err := os.WriteFile(results, []byte(`{"id":"earlier"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, generateJobs(1)...)
	err := App().Run([]string{"zkpipe", "prove", "--device", "cpu", "--circuit", filepath.Join(root, "chian"),
		"--jobs", jobs, "--out", filepath.Join(root, "out"), "--results", results})
	if err == nil {
		t.Fatal("a missing circuit directory was accepted")
	}
	if data, _ := os.ReadFile(results); string(data) != `{"id":"earlier"}`+"\n" {
		t.Errorf("--results was touched: %q", data)
	}
}

// kill -9 mid-stream, then the same jobs again with --skip-done: only the
// unfinished ones are proven, no temporary file is left, and every proof
// verifies with gnark.
func TestKillThenSkipDoneProvesOnlyTheRest(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 3000)
	out, jobs := filepath.Join(root, "out"), filepath.Join(root, "jobs.jsonl")
	const n = 40
	writeJobs(t, jobs, generateJobs(n)...)
	args := []string{"prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs, "--out", out, "--mem-status", "0"}

	first := exec.Command(bin, append(args, "--results", "-")...)
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for seen := 0; seen < 5 && sc.Scan(); seen++ {
	}
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	done := 0
	for i := 1; i <= n; i++ {
		if _, err := os.Stat(filepath.Join(out, fmt.Sprintf("j%d.proof", i))); err == nil {
			done++
		}
	}
	if done < 5 || done == n {
		t.Fatalf("%d of %d proofs before the kill: the test needs a run killed mid-stream", done, n)
	}

	results := filepath.Join(root, "rerun.jsonl")
	if code := exitCode(t, exec.Command(bin, append(args, "--skip-done", "--results", results)...)); code != 0 {
		t.Fatalf("rerun: exit code %d", code)
	}
	lines, err := stream.ReadResultsFile(results)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(chain, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	resumed, ids := 0, map[string]bool{}
	for _, l := range lines {
		ids[l.ID] = true
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
			continue
		}
		if l.Resumed {
			resumed++
		}
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Errorf("%s: gnark rejects it: %v", l.ID, err)
		}
	}
	if len(ids) != n || resumed != done {
		t.Errorf("rerun: %d ids, %d resumed; want %d ids, %d resumed (the proofs on disk at the kill)", len(ids), resumed, n, done)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if blob.IsTempName(e.Name()) {
			t.Errorf("temporary file left in --out: %s", e.Name())
		}
	}
}

// A witness that is a FIFO nobody writes to: a second Ctrl-C still ends the
// process within a few seconds.
func TestSecondSignalEndsAStreamBlockedOnAFIFO(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	fifo := filepath.Join(root, "w.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, fmt.Sprintf(`{"id":"stuck","witness":%q}`, fifo))
	cmd := exec.Command(bin, "prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs,
		"--out", filepath.Join(root, "out"), "--results", filepath.Join(root, "r.jsonl"), "--mem-status", "1s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The status line shows the job running in parse (0 queued + 1 running,
	// of its workers): blocked on the FIFO.
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "| parse 0+1/") {
	}
	cmd.Process.Signal(os.Interrupt)
	for sc.Scan() && !strings.Contains(sc.Text(), "stopping intake") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	cmd.Process.Signal(os.Interrupt)
	start := time.Now()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
			t.Errorf("exit: %v, want code %d (a second signal aborts)", err, ExitInterrupted)
		}
		t.Logf("exited %s after the second Ctrl-C", time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 5 s after the second Ctrl-C")
	}
}

// With --results -, stdout holds result lines and nothing else (gnark's
// logger writes to stdout: nothing of it may get there).
func TestStdoutHoldsOnlyResultLines(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, generateJobs(2)...)
	out, err := exec.Command(bin, "prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs,
		"--out", filepath.Join(root, "out"), "--results", "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines, err := stream.ReadResults(strings.NewReader(string(out)))
	if err != nil || len(lines) != 2 {
		t.Fatalf("stdout is not two result lines (%v):\n%s", err, out)
	}
}
