package fleet_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/internal/hostilewasm"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// Jobs that would stall a worker for good, or take the innocent down with
// them (issue 22, items 9 and 10).

var circomTestdata = filepath.Join("..", "source", "circomsrc", "testdata")

// pushPoison pushes circuit name: testdata's mul.zkey with mul.wasm made
// hostile by poison (a hostilewasm builder); every job of it misbehaves in
// its witness calculation, the circuit itself loads.
func pushPoison(t *testing.T, q *fleet.Queue, name string, poison func([]byte) ([]byte, error)) {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join(circomTestdata, "mul.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	zkey, err := os.ReadFile(filepath.Join(circomTestdata, "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := poison(wasm)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	zp, wp := filepath.Join(dir, name+".zkey"), filepath.Join(dir, name+".wasm")
	os.WriteFile(zp, zkey, 0o644)
	os.WriteFile(wp, bad, 0o644)
	if got, err := fleet.PushCircom(context.Background(), q, zp, wp); err != nil || got != name {
		t.Fatalf("push %s: %q %v", name, got, err)
	}
}

func looping(wasm []byte) ([]byte, error) { return hostilewasm.Loop(wasm, "init") }

func pushMul(t *testing.T, q *fleet.Queue) {
	t.Helper()
	if _, err := fleet.PushCircom(context.Background(), q, filepath.Join(circomTestdata, "mul.zkey"), filepath.Join(circomTestdata, "mul.wasm")); err != nil {
		t.Fatal(err)
	}
}

func inputJob(id, circuit string, a int) string {
	return fmt.Sprintf(`{"id":%q,"circuit":%q,"input":{"a":"%d","b":"11"}}`, id, circuit, a)
}

// A circom job whose witness calculator never returns, among good jobs,
// with a real engine: it is terminated with its error once it has run
// alone past the job timeout, every good job is proven, and the worker goes
// on with a new engine each time one got stuck (as zkpipe worker does).
// Before, the worker heartbeat the job for ever: it was never answered,
// nor were the jobs behind it.
func TestLoopingWasmJobIsTerminated(t *testing.T) {
	q, _ := startQueue(t, 2*time.Second)
	pushMul(t, q)
	pushPoison(t, q, "loop", looping)
	submit(t, q, "", inputJob("ok1", "mul", 3), inputJob("poison", "loop", 3), inputJob("ok2", "mul", 5), inputJob("ok3", "mul", 7))
	cache, out := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stuck := 0
	runs := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			eng, err := engine.New(ctx, engine.Options{Device: "cpu", Out: out, Log: testLog{t}})
			if err != nil {
				runs <- err
				return
			}
			w := fleet.NewWorker(q, eng, fleet.WorkerOptions{Cache: cache, Poll: 50 * time.Millisecond, JobTimeout: 4 * time.Second, Log: testLog{t}})
			err = w.Run(ctx, ctx)
			eng.Close()
			if !errors.Is(err, fleet.ErrProverStuck) {
				runs <- err
				return
			}
			stuck++
		}
		runs <- ctx.Err()
	}()
	res := waitResults(t, q, 4, 60*time.Second)
	cancel()
	if err := <-runs; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("worker: %v", err)
	}
	if r := res["poison"]; !strings.Contains(r.Error, "job poison: still unanswered 4s after it entered this worker's prover (fleet.WorkerOptions.JobTimeout): terminated") {
		t.Errorf("poison: %+v", r)
	}
	vk, err := circomsrc.ReadVerifyingKey(filepath.Join(circomTestdata, "mul.vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ok1", "ok2", "ok3"} {
		r := res[id]
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
			continue
		}
		if err := circomsrc.VerifyFiles(context.Background(), vk, r.Proof, r.Public); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	t.Logf("the engine got stuck %d times", stuck)
	settled(t, q) // the poison job terminated, not waiting for redelivery
	noneLeft(t, q)
}

// A job that is in the prover whenever its worker is stopped (SIGTERM
// twice, ctx cancelled) is not handed back for free: each such stop is a
// delivery that ended with no answer, it then runs alone, and after
// MaxDeliveries stops alone it is answered with an error and dropped.
// Before, each stop was a hand-back, which never counts: the job went round
// for ever.
func TestJobInTheProverAtEachStopDies(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", genJob("sticky"))
	for stops := 0; ; stops++ {
		if stops > 6 {
			t.Fatalf("still queued after %d stops in the prover", stops)
		}
		f := newFake(t, 2)
		f.gate = make(chan struct{}) // never opened: the job stays in the prover
		w := fleet.NewWorker(q, f, fleet.WorkerOptions{Cache: t.TempDir(), MaxDeliveries: 2, Poll: 50 * time.Millisecond, Log: testLog{t}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx, ctx) }()
		var answered bool
		for deadline := waitEnd(t); len(f.entered()) == 0; time.Sleep(20 * time.Millisecond) {
			if _, err := q.Results.GetLastMsgForSubject(context.Background(), "zkpipe.results.sticky"); err == nil {
				answered = true
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the job neither entered the prover nor was answered")
			}
		}
		if answered {
			settled(t, q) // acked after the answer: a stop in between hands it back
		}
		cancel()
		<-done
		if answered {
			if stops != 3 { // one lost with nothing known, two alone
				t.Errorf("answered after %d stops, want 3", stops)
			}
			break
		}
	}
	r := waitResults(t, q, 1, 5*time.Second)["sticky"]
	if !strings.Contains(r.Error, "job sticky: delivered 4 times; 2 of them it ran alone") {
		t.Fatalf("result %+v", r)
	}
	settled(t, q)
	noneLeft(t, q)
}

// rss is the resident set of process pid, in bytes (0 once it is gone).
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb << 10
		}
	}
	return 0
}

// killWorkersUntilAnswered runs worker processes (one at a time, --max-deliveries
// 2, the calculator's cap lifted so that the OOM killer, not the cap, stops a
// hog) and plays the OOM killer on each (oomKiller at 256 MiB), starting the
// next as a supervisor would, until the results stream holds want lines; it
// fails the test after more than maxRuns workers, or if one exits by itself.
// It returns how many it killed.
func killWorkersUntilAnswered(t *testing.T, bin, url string, q *fleet.Queue, want uint64, maxRuns int) int {
	t.Helper()
	cache := t.TempDir()
	answered := func() bool {
		info, err := q.Results.Info(context.Background())
		return err == nil && info.State.Msgs >= want
	}
	kills := 0
	for run := 0; !answered(); run++ {
		if run > maxRuns {
			t.Fatalf("not answered after %d workers, %d of them killed", run, kills)
		}
		p := start(t, bin, fmt.Sprint("worker", run), "worker", "--nats", url, "--cache", cache, "--mem-status", "0",
			"--parse-workers", "1", "--synthesize-workers", "1", "--max-deliveries", "2", "--wasm-memory", "4GiB")
		if oomKiller(p, 256<<20, answered) {
			kills++
			continue
		}
		select {
		case <-p.done:
			t.Fatalf("worker %d exited: %v", run, p.cmd.ProcessState)
		default:
		}
	}
	return kills
}

// oomKiller plays the kernel's OOM killer for worker processes: it kills
// p with SIGKILL once its resident set passes limit, and says whether it
// did; it returns false when p exits or done says so first.
func oomKiller(p *proc, limit int64, done func() bool) bool {
	for {
		select {
		case <-p.done:
			return false
		case <-time.After(5 * time.Millisecond):
		}
		if rss(p.cmd.Process.Pid) > limit {
			p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
			return true
		}
		if done() {
			return false
		}
	}
}

// A job whose witness calculation grows its memory until the OOM killer
// (here the test, with SIGKILL at 256 MiB of RSS) kills the worker, and an
// innocent job the same worker held at the crash (behind it in the one
// synthesize worker), in real worker processes with --max-deliveries 2:
// the killer is dropped with an error once it has killed two workers
// running alone, and the innocent is proven. Before, both were dropped
// after their second crash together.
func TestKillerJobDiesAloneInnocentLives(t *testing.T) {
	bin := binary(t)
	q, url := startQueue(t, 2*time.Second)
	pushChain(t, q)
	pushPoison(t, q, "hog", func(w []byte) ([]byte, error) { return hostilewasm.Grow(w, "init", 16384) }) // 1 GiB, if nothing stops it
	submit(t, q, "", inputJob("killer", "hog", 3), `{"id":"innocent","circuit":"chain","generate":{"seed":1}}`)
	kills := killWorkersUntilAnswered(t, bin, url, q, 2, 8)
	res := waitResults(t, q, 2, 10*time.Second)
	t.Logf("%d workers killed", kills)
	if r := res["innocent"]; r.Error != "" {
		t.Errorf("innocent: %s", r.Error)
	}
	// one or more deliveries shared a worker (how many depends on which
	// worker took which job first), then two ran alone; every delivery but
	// the last, which refused it, cost a worker
	r := res["killer"]
	var delivered int
	if _, err := fmt.Sscanf(r.Error, "job killer: delivered %d times; 2 of them it ran alone", &delivered); err != nil || delivered < 4 || kills != delivered-1 {
		t.Errorf("killer after %d kills (want at least 3, one a delivery but the last: shared ones, then two alone): %+v", kills, r)
	}
	settled(t, q)
	noneLeft(t, q)
}

// A circom circuit whose witness calculator loops at load time (in an
// export called when the circuit is loaded): its job fails with an error
// naming the circuit and the timeout, instead of holding the worker's
// intake for good.
func TestCircuitThatNeverLoadsFailsItsJob(t *testing.T) {
	q, _ := startQueue(t, 2*time.Second)
	pushPoison(t, q, "stall", func(w []byte) ([]byte, error) { return hostilewasm.Loop(w, "getFieldNumLen32") })
	submit(t, q, "", inputJob("stalled", "stall", 3))
	f := newFake(t, 2)
	w := fleet.NewWorker(q, f, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, JobTimeout: time.Second, Log: testLog{t}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { cancel(); <-done }()
	r := waitResults(t, q, 1, 20*time.Second)["stalled"]
	if !strings.Contains(r.Error, "job stalled: parse: circuit stall: not fetched and loaded within fleet.WorkerOptions.JobTimeout (1s)") {
		t.Fatalf("result %+v", r)
	}
	settled(t, q)
	noneLeft(t, q)
}

// running is the number of jobs running in stage of the worker whose
// metrics are on addr (-1: no answer yet).
func running(addr, stage string) int {
	r, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer r.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bufio.NewReader(r.Body))
	if err != nil || fams["zkpipe_stage_jobs"] == nil {
		return -1
	}
	for _, m := range fams["zkpipe_stage_jobs"].Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["stage"] == stage && labels["state"] == "running" {
			return int(m.GetGauge().GetValue())
		}
	}
	return 0
}

// A worker process stopped (SIGTERM, then SIGINT: the second signal hands
// the jobs in hand back) while a looping circom job is in its pipeline, again
// and again: each stop counts as a delivery that ended with no answer, so
// the job, running alone from the second, is answered with an error after
// --max-deliveries stops alone. Before, each stop was a hand-back, which
// never counts: the job outlived every worker that took it.
func TestWorkerStoppedOnAPoisonJobEndsIt(t *testing.T) {
	bin := binary(t)
	q, url := startQueue(t, 5*time.Second)
	pushPoison(t, q, "loop", looping)
	submit(t, q, "", inputJob("poison", "loop", 3))
	cache := t.TempDir()
	answered := func() bool {
		_, err := q.Results.GetLastMsgForSubject(context.Background(), "zkpipe.results.poison")
		return err == nil
	}
	stops := 0
	for ; !answered(); stops++ {
		if stops > 5 {
			t.Fatalf("still unanswered after %d stops", stops)
		}
		addr := freePort(t)
		p := start(t, bin, fmt.Sprint("worker", stops), "worker", "--nats", url, "--cache", cache, "--mem-status", "0",
			"--max-deliveries", "2", "--metrics-addr", addr)
		for deadline := waitEnd(t); running(addr, "synthesize") != 1 && !answered(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the poison job did not reach synthesize by the test's deadline")
			}
		}
		if answered() {
			// The answering worker acks the job after it publishes the
			// answer: stopped in between (two signals abort the jobs in
			// hand), it would hand the job back and leave it in the queue.
			settled(t, q)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.done:
		case <-time.After(time.Until(waitEnd(t))):
			t.Fatal("worker still running at the test's deadline, after two signals")
		}
	}
	if stops != 4 { // the last worker answered it at once
		t.Errorf("answered after %d workers, want 4 (one stop shared, two alone, the answer)", stops)
	}
	r := waitResults(t, q, 1, 5*time.Second)["poison"]
	if !strings.Contains(r.Error, "job poison: delivered 4 times; 2 of them it ran alone") {
		t.Fatalf("result %+v", r)
	}
	settled(t, q)
	noneLeft(t, q)
}
