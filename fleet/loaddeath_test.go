package fleet_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/internal/hostilewasm"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// startLimited is start under an address-space limit of asBytes
// (RLIMIT_AS, set by the shell that execs the process: the pid is the
// process's own).
func startLimited(t *testing.T, bin, name string, asBytes int64, args ...string) *proc {
	t.Helper()
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, asBytes>>10)
	return start(t, "/bin/sh", name, append([]string{"-c", script, bin}, args...)...)
}

// TestWorkerDyingAtLoadIsCounted: every worker that loads circuit mul dies
// there, as a worker under a 3 GB address-space limit does whose
// --wasm-memory (4 GiB, under a --mem-budget that allows it) makes the
// witness calculator's instance at load larger than the process may map:
// the Go runtime's "out of memory", a death no code of the worker's sees.
// Real worker processes, restarted as a supervisor would, with
// --max-deliveries 2: the job of mul is answered with an error once two of
// its runs alone (each counted in the store before the load) ended in a
// death, and the job of chain is proven. Before (issue 45, row 2), a death
// at load was never counted: the fleet crash-looped on the job for ever.
func TestWorkerDyingAtLoadIsCounted(t *testing.T) {
	bin := binary(t)
	q, url := startQueue(t, 2*time.Second)
	pushChain(t, q)
	pushMul(t, q)
	submit(t, q, "", inputJob("deadly", "mul", 3), `{"id":"fine","circuit":"chain","generate":{"seed":1}}`)
	cache := t.TempDir()
	answered := func() bool {
		info, err := q.Results.Info(context.Background())
		return err == nil && info.State.Msgs >= 2
	}
	deaths, atLoad := 0, 0
	for run := 0; !answered(); run++ {
		if run > 8 {
			t.Fatalf("not answered after %d workers, %d of them dead", run, deaths)
		}
		p := startLimited(t, bin, fmt.Sprint("worker", run), 3<<30, "worker", "--nats", url, "--cache", cache, "--mem-status", "0",
			"--max-deliveries", "2", "--wasm-memory", "4GiB", "--mem-budget", "16GiB")
		for !answered() {
			select {
			case <-p.done:
			case <-time.After(20 * time.Millisecond):
				continue
			}
			break
		}
		select {
		case <-p.done:
			deaths++
			b, _ := os.ReadFile(p.log)
			if strings.Contains(string(b), "out of memory") && strings.Contains(string(b), "NewCalculatorWith") {
				atLoad++
			}
		default:
		}
	}
	res := waitResults(t, q, 2, 10*time.Second)
	t.Logf("%d workers died, %d of them at the calculator's load", deaths, atLoad)
	if r := res["fine"]; r.Error != "" || r.Proof == "" {
		t.Errorf("fine: %+v", r)
	}
	// the first delivery (shared) and the two alone each cost a worker;
	// the fourth is refused
	r := res["deadly"]
	var delivered int
	if _, err := fmt.Sscanf(r.Error, "job deadly: delivered %d times; 2 of them it ran alone", &delivered); err != nil || delivered < 4 || deaths != delivered-1 || atLoad != deaths {
		t.Errorf("deadly after %d deaths (%d at load; want at least 3, every delivery but the last): %+v", deaths, atLoad, r)
	}
	settled(t, q)
	noneLeft(t, q)
}

// TestCircuitLoadIsHeld: a worker loads a circom circuit's witness
// calculator with its instance at load reserved with the prover's memory
// budget (its memory limit, --wasm-memory), and released once loaded.
// Before (issue 45, row 2), that instance was outside every reservation.
func TestCircuitLoadIsHeld(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushMul(t, q)
	f := newFake(t, 2)
	w := fleet.NewWorker(q, f, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: testLog{t},
		Wasm: circomsrc.Limits{Memory: 32 << 20}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { cancel(); <-done }()
	submit(t, q, "", inputJob("in1", "mul", 3))
	waitResults(t, q, 1, 30*time.Second)
	f.mu.Lock()
	asked := f.holds["circuit mul (its load)"]
	f.mu.Unlock()
	if asked != 32<<20 {
		t.Errorf("the load held %d bytes, want the calculator's memory limit (%d); holds: %v", asked, 32<<20, f.holds)
	}
	if n := f.heldBytes(); n != 0 {
		t.Errorf("%d bytes still held after the load and the job", n)
	}
}

// TestKillerPartitionFailsItsRequestAlone: a request of three partitions
// of a circom circuit whose calculator grows its memory without bound for
// one input only (partition 1's), in real worker processes that the test
// kills with SIGKILL at 256 MiB of RSS, as the OOM killer would, with
// --max-deliveries 2: partition 1 is answered as dead after its runs
// alone, partitions 0 and 2 are proved, and the request gets one line,
// failed, naming partition 1; a job beside it is proven.
func TestKillerPartitionFailsItsRequestAlone(t *testing.T) {
	bin := binary(t)
	q, url := startQueue(t, 2*time.Second)
	pushChain(t, q)
	pushPoison(t, q, "hogsig", func(w []byte) ([]byte, error) { return hostilewasm.GrowOnSignal(w, "poison", 16384) })
	submit(t, q, "", `{"id":"pr","circuit":"hogsig","partitions":[{"input":{"a":"3","b":"11"}},{"input":{"a":"3","b":"11","poison":"1"}},{"input":{"a":"4","b":"11"}}]}`,
		`{"id":"fine","circuit":"chain","generate":{"seed":1}}`)
	kills := killWorkersUntilAnswered(t, bin, url, q, 2, 10)
	res := waitResults(t, q, 2, 10*time.Second)
	t.Logf("%d workers killed", kills)
	if r := res["fine"]; r.Error != "" {
		t.Errorf("fine: %s", r.Error)
	}
	r := res["pr"]
	if !strings.HasPrefix(r.Error, "job pr: partition 1 of 3 failed (the others' proofs are written); first: job pr/1: delivered ") ||
		!strings.Contains(r.Error, "2 of them it ran alone") || len(r.Partitions) != 3 ||
		r.Partitions[0].Proof == "" || r.Partitions[2].Proof == "" || r.Partitions[1].Error == "" || kills < 3 {
		t.Errorf("after %d kills: %+v", kills, r)
	}
	settled(t, q)
	noneLeft(t, q)
}
