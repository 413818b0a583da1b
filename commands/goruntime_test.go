package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/stream"
)

// goSettings reads the Go runtime's memory limit and GOGC without changing
// them.
func goSettings() (limit int64, gc int) {
	limit = debug.SetMemoryLimit(-1)
	gc = debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	return limit, gc
}

// While zkpipe prove runs, the Go memory limit follows --mem-budget and GOGC
// is engine.BudgetGCPercent unless GOGC is in the environment; with the
// budget off neither is touched; at the end both are back. The engine sets
// them only because the command asks (engine.MemoryOptions.SetGoLimit): the
// jobs come through a FIFO, so the settings are read while the engine is
// open, after its first proof.
func TestProveSetsTheGoMemoryLimitAndGOGC(t *testing.T) {
	dir := setupCircuit(t, t.TempDir(), "chain", "mulchain", 100)
	limit0, gc0 := goSettings()
	if gc0 == engine.BudgetGCPercent {
		t.Fatalf("GOGC is %d already", gc0)
	}
	for _, c := range []struct {
		name, budget, gogc string
		wantLimit          bool // the limit within the budget, not limit0
		wantGC             int
	}{
		{"under a budget", "1GiB", "", true, engine.BudgetGCPercent},
		{"GOGC set by the user", "1GiB", "100", true, gc0},
		{"no budget", "off", "", false, gc0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc) // read by the command; the runtime read it at start
			root := t.TempDir()
			jobs, results := filepath.Join(root, "jobs.fifo"), filepath.Join(root, "results.jsonl")
			if err := syscall.Mkfifo(jobs, 0o644); err != nil {
				t.Fatal(err)
			}
			app := App()
			app.ErrWriter = io.Discard
			done := make(chan error, 1)
			go func() {
				done <- app.Run([]string{"zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobs,
					"--out", filepath.Join(root, "out"), "--results", results, "--mem-budget", c.budget, "--mem-status", "0"})
			}()
			w := openFIFO(t, jobs, done)
			fmt.Fprintln(w, `{"id":"j1","generate":{"seed":1}}`)
			waitForResult(t, results, done)
			limit, gc := goSettings()
			w.Close() // the stream ends
			if err := <-done; err != nil {
				t.Fatalf("prove: %v", err)
			}

			if c.wantLimit && (limit > 1<<30 || limit < 1<<30/4) {
				t.Errorf("Go memory limit %d while proving under a 1 GiB budget, want the budget less what is not Go's (%d before)", limit, limit0)
			}
			if !c.wantLimit && limit != limit0 {
				t.Errorf("Go memory limit %d while proving with no budget, want %d untouched", limit, limit0)
			}
			if gc != c.wantGC {
				t.Errorf("GOGC %d while proving, want %d", gc, c.wantGC)
			}
			if l, g := goSettings(); l != limit0 || g != gc0 {
				t.Errorf("after prove: limit %d, GOGC %d; want %d and %d back", l, g, limit0, gc0)
			}
		})
	}
}

// openFIFO opens path for writing once the command opens it for reading,
// failing if the command ends first.
func openFIFO(t *testing.T, path string, done <-chan error) *os.File {
	t.Helper()
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			f = nil
		}
		opened <- f
	}()
	select {
	case f := <-opened:
		if f == nil {
			t.FailNow()
		}
		return f
	case err := <-done:
		t.Fatalf("prove ended before reading its jobs: %v", err)
	}
	return nil
}

// waitForResult waits until results holds a line, failing if the command
// ends first or nothing comes within a minute (a hang guard).
func waitForResult(t *testing.T, results string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("prove ended before its first result: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		lines, err := stream.ReadResultsFile(results)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if len(lines) > 0 {
			if lines[0].Error != "" {
				t.Fatalf("job %s: %s", lines[0].ID, lines[0].Error)
			}
			return
		}
	}
	t.Fatal("no result line within a minute")
}
