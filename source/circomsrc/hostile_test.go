package circomsrc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/hostilewasm"
	"github.com/zkpipe/zkpipe/internal/zkpipebin"
)

// hostileCircuit writes testdata's mul circuit under name (its zkey, and
// the wasm that make makes of mul.wasm) into dir, and returns the
// --zkey/--wasm flags for it.
func hostileCircuit(t *testing.T, dir, name string, make func([]byte) ([]byte, error)) []string {
	t.Helper()
	code, err := os.ReadFile(tdPath(t, "mul.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if code, err = make(code); err != nil {
		t.Fatal(err)
	}
	zkey, err := os.ReadFile(tdPath(t, "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	zp, wp := filepath.Join(dir, name+".zkey"), filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(zp, zkey, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wp, code, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--zkey", zp, "--wasm", wp}
}

func goodJob(id, circuit string) string {
	return fmt.Sprintf(`{"id":%q,"circuit":%q,"input":{"a":"3","b":"11"}}`, id, circuit)
}

// poisonJob names the input signal "poison", which the hostile modules
// act on (getInputSignalSize is asked for it after a and b).
func poisonJob(id, circuit string) string {
	return fmt.Sprintf(`{"id":%q,"circuit":%q,"input":{"a":"3","b":"11","poison":"1"}}`, id, circuit)
}

// TestPoisonWasmJobsFailAlone: in one zkpipe prove stream, a job whose
// witness calculation never ends fails at its deadline, naming it, and a
// job whose calculation grows its memory to the wasm32 limit (4 GiB, each
// page written) fails at the memory limit, naming it; the good jobs around
// them prove and verify with snarkjs, the exit code says not all were
// proven, and the process's peak RSS stays far below what the grown memory
// would take. Each input job's reservation counts the calculator's memory.
func TestPoisonWasmJobsFailAlone(t *testing.T) {
	dir := t.TempDir()
	var args []string
	args = append(args, hostileCircuit(t, dir, "loop", func(b []byte) ([]byte, error) { return hostilewasm.LoopOnSignal(b, "poison") })...)
	args = append(args, hostileCircuit(t, dir, "grow", func(b []byte) ([]byte, error) { return hostilewasm.GrowOnSignal(b, "poison", 65536) })...)
	jobs := []string{
		goodJob("g1", "loop"), poisonJob("loops", "loop"), goodJob("g2", "loop"),
		goodJob("g3", "grow"), poisonJob("grows", "grow"), goodJob("g4", "grow"),
		poisonJob("loops2", "loop"), goodJob("g5", "loop"), poisonJob("grows2", "grow"), goodJob("g6", "grow"),
	}
	const limit = 64 << 20
	r := prove(t, dir, jobs, append(args, "--wasm-timeout", "2s", "--wasm-memory", "64MiB", "--synthesize-workers", "2")...)
	if r.code != 2 {
		t.Errorf("exit code %d, want 2 (not every job proven); stderr:\n%s", r.code, r.stderr)
	}
	for _, id := range []string{"g1", "g2", "g3", "g4", "g5", "g6"} {
		checkProved(t, r, id)
		if got := r.results[id].ReservedBytes; got < limit {
			t.Errorf("%s reserved %d bytes, less than the calculator's %d-byte memory limit", id, got, limit)
		}
	}
	for id, want := range map[string]string{
		"loops": "deadline of 2s (--wasm-timeout)", "loops2": "deadline of 2s (--wasm-timeout)",
		"grows": "memory limit of 64MiB (--wasm-memory)", "grows2": "memory limit of 64MiB (--wasm-memory)",
	} {
		l := r.results[id]
		if l.Proof != "" || !strings.Contains(l.Error, want) || !strings.Contains(l.Error, "job "+id) {
			t.Errorf("%s: %+v, want its error naming it and %q", id, l, want)
		}
	}
	// Two synthesize workers' calculators at 64 MiB beside the runtime: far
	// below the 4 GiB (and more, in copies) one poison job would take.
	if r.maxRSS == 0 || r.maxRSS > 1<<30 {
		t.Errorf("peak RSS %d bytes, want well under 1 GiB", r.maxRSS)
	}
	t.Logf("peak RSS %d MiB", r.maxRSS>>20)
}

// TestLoadBoundsTheWasm: a module that loops in an export called at load
// fails start-up at the deadline, naming the export, instead of hanging;
// one that declares more memory than its limit is refused at load; bad
// flag values are refused.
func TestLoadBoundsTheWasm(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		make   func([]byte) ([]byte, error)
		flags  []string
		errors []string
	}{
		{"loopsize", func(b []byte) ([]byte, error) { return hostilewasm.Loop(b, "getWitnessSize") },
			[]string{"--wasm-timeout", "1s"}, []string{"getWitnessSize at load ran past its deadline of 1s (--wasm-timeout)", "loopsize"}},
		{"loopfield", func(b []byte) ([]byte, error) { return hostilewasm.Loop(b, "getFieldNumLen32") },
			[]string{"--wasm-timeout", "1s"}, []string{"getFieldNumLen32 at load ran past its deadline of 1s"}},
		{"loopshared", func(b []byte) ([]byte, error) { return hostilewasm.Loop(b, "getSharedRWMemoryStart") },
			[]string{"--wasm-timeout", "1s"}, []string{"ran past its deadline of 1s"}},
		{"huge", func(b []byte) ([]byte, error) { return hostilewasm.InitialMemory(b, 65536) },
			[]string{"--wasm-memory", "64MiB"}, []string{"declares 4GiB of memory, more than its limit of 64MiB (--wasm-memory)"}},
		{"hugeauto", func(b []byte) ([]byte, error) { return hostilewasm.InitialMemory(b, 65536) },
			[]string{"--mem-budget", "8GiB"}, []string{"declares 4GiB of memory, more than its limit of 1GiB (--wasm-memory)"}},
		{"negtimeout", func(b []byte) ([]byte, error) { return b, nil }, []string{"--wasm-timeout", "-1s"}, []string{"--wasm-timeout -1s"}},
		{"bigmemory", func(b []byte) ([]byte, error) { return b, nil }, []string{"--wasm-memory", "5GiB"}, []string{"--wasm-memory \"5GiB\""}},
	} {
		sub := filepath.Join(dir, c.name)
		os.Mkdir(sub, 0o755)
		r := prove(t, sub, []string{goodJob("j", c.name)}, append(hostileCircuit(t, sub, c.name, c.make), c.flags...)...)
		if r.code != 1 {
			t.Errorf("%s: exit code %d, want 1 (the run cannot start)", c.name, r.code)
		}
		for _, want := range c.errors {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr %q, want %q", c.name, r.stderr, want)
			}
		}
	}
}

// TestSignalsStopALoopingCalculation: with a job whose calculation never
// ends in synthesize, the first SIGINT drains (the job fails at its
// deadline, the good job already read proves, zkpipe exits by itself), and
// with a deadline of ten minutes the second SIGINT aborts it at once: the
// stream's cancellation reaches the wasm.
func TestSignalsStopALoopingCalculation(t *testing.T) {
	bin := zkpipebin.Path(t, "sends zkpipe prove signals")
	for _, c := range []struct {
		name     string
		timeout  string
		sig      syscall.Signal
		signals  int
		wantCode int
	}{
		{"drain", "3s", syscall.SIGINT, 1, 2},
		{"drain-sigterm", "3s", syscall.SIGTERM, 1, 2},
		{"abort", "10m", syscall.SIGINT, 2, 130},
		{"abort-sigterm", "10m", syscall.SIGTERM, 2, 130},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := hostileCircuit(t, dir, "loop", func(b []byte) ([]byte, error) { return hostilewasm.LoopOnSignal(b, "poison") })
			jobsFile, results := filepath.Join(dir, "jobs.jsonl"), filepath.Join(dir, "results.jsonl")
			if err := os.WriteFile(jobsFile, []byte(goodJob("g1", "loop")+"\n"+poisonJob("loops", "loop")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A guard against a hang, not a measurement: the test fails
			// instead of waiting for the ten-minute deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"prove", "--device", "cpu", "--mem-status", "1s", "--wasm-timeout", c.timeout,
				"--jobs", jobsFile, "--out", filepath.Join(dir, "out"), "--results", results}, args...)...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The status line shows the poison job running in synthesize
			// once the good one is through.
			sc := bufio.NewScanner(stderr)
			var log strings.Builder
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "zkpipe: 1 proofs") && strings.Contains(sc.Text(), "synthesize 0+1/") {
					break
				}
			}
			for i := 0; i < c.signals; i++ {
				cmd.Process.Signal(c.sig)
				for i == 0 && c.signals > 1 && sc.Scan() && !strings.Contains(sc.Text(), "stopping intake") {
				}
			}
			go func() {
				for sc.Scan() {
				}
			}()
			err = cmd.Wait()
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			if ctx.Err() != nil {
				t.Fatalf("still running after the signals (killed by the test's guard); stderr:\n%s", log.String())
			}
			if code != c.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, c.wantCode, log.String())
			}
			res := readResults(t, results)
			checkProved(t, proveRun{results: res}, "g1")
			if c.signals == 1 && !strings.Contains(res["loops"].Error, "deadline of 3s") {
				t.Errorf("the looping job: %+v, want it failed at its deadline", res["loops"])
			}
		})
	}
}
