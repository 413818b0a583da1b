package fleet_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/internal/hostilewasm"
	"github.com/zkpipe/zkpipe/internal/zkpipebin"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

func binary(t testing.TB) string {
	t.Helper()
	return zkpipebin.Path(t, "runs worker processes")
}

func freePort(t testing.TB) string {
	t.Helper()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		// never the same port twice in one test binary: a process started
		// later on a port handed out before would meet the first's
		portsMu.Lock()
		dup := ports[addr]
		ports[addr] = true
		portsMu.Unlock()
		if !dup {
			return addr
		}
	}
}

var (
	portsMu sync.Mutex
	ports   = map[string]bool{}
)

// proc is a zkpipe process; its output goes to a file, logged if the test
// fails.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	log  string        // its output so far
}

func start(t testing.TB, bin, name string, args ...string) *proc {
	t.Helper()
	return startCmd(t, name, exec.Command(bin, args...))
}

// startCmd starts cmd (a zkpipe process named name in the test's logs),
// its output to a file shown if the test fails; it is stopped (SIGTERM) at
// the test's end, killed if it is still running at the test's deadline.
func startCmd(t testing.TB, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	log, err := os.CreateTemp(t.TempDir(), name+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: log.Name()}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(time.Until(waitEnd(t))):
			t.Errorf("%s: still running at the test's deadline, after SIGTERM", name)
			cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("%s:\n%s", name, b)
		}
		log.Close()
	})
	return p
}

func waitHealthy(t testing.TB, addr string) {
	t.Helper()
	end := waitEnd(t)
	for {
		r, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatalf("%s/healthz: not healthy by the test's deadline (%v)", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runFailed runs zkpipe expecting exit code 2: it finished, and wrote
// failed result lines (as zkpipe prove and zkpipe results do then).
func runFailed(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("zkpipe %s: %v, want exit code 2 (failed lines)\n%s", strings.Join(args, " "), err, out)
	}
}

func run(t testing.TB, bin string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zkpipe %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestFleetOfProcesses: three worker processes, one killed with SIGKILL
// mid-stream and restarted; 200 jobs and 10 high-priority ones submitted
// behind them, two bad ones, and a poison job whose circom witness
// calculator never returns and one whose calculator grows its memory
// without bound (workers with --wasm-timeout 2s and a 64 MiB memory cap,
// which the hog reaches in well under the deadline however busy the
// machine: filling the default 256 MiB outlasted 2 s on CI's two cores).
// And a job whose circuit kills every worker that loads it: the test plays
// the OOM killer, killing with SIGKILL any worker that starts to load
// circuit stall (whose calculator would take 2 s at load) and starting it
// again; with --max-deliveries 2 that job is answered with an error after
// three deaths, two of them runs alone. Every id gets exactly one result
// line, every proof verifies with gnark, the bad and poison jobs get error
// results and are not redelivered, the high jobs finish before most normal
// ones.
func TestFleetOfProcesses(t *testing.T) {
	bin := binary(t)
	dir := circuitDir(t)
	const ackWait = 3 * time.Second
	q, url := startQueue(t, ackWait)
	run(t, bin, "", "circuit", "push", "--nats", url, dir)
	pushPoison(t, q, "loop", looping)
	// to the wasm32 limit (4 GiB), if nothing stops it
	pushPoison(t, q, "hog", func(w []byte) ([]byte, error) { return hostilewasm.Grow(w, "init", 65536) })
	// loops at load until --wasm-timeout; the test kills its loaders first
	pushPoison(t, q, "stall", func(w []byte) ([]byte, error) { return hostilewasm.Loop(w, "getFieldNumLen32") })
	poisons := map[string]string{ // job → what its error must say
		inputJob("poison-loop", "loop", 3):  "ran past its deadline of 2s (--wasm-timeout)",
		inputJob("poison-hog", "hog", 3):    "the witness calculator's memory limit",
		inputJob("poison-load", "stall", 3): "2 of them it ran alone, on workers that stopped without an answer",
	}

	tmp := t.TempDir()
	workerArgs := func(i int, metrics string) []string {
		return []string{"worker", "--nats", url, "--cache", filepath.Join(tmp, fmt.Sprint("cache", i)),
			"--mem-status", "0", "--metrics-addr", metrics, "--wasm-timeout", "2s", "--wasm-memory", "64MiB", "--job-timeout", "5s",
			"--max-deliveries", "2"}
	}
	var jobs strings.Builder
	for i := range 200 {
		fmt.Fprintf(&jobs, `{"id":"n%03d","circuit":"chain","generate":{"seed":%d}}`+"\n", i, i)
		if i == 150 { // behind the high jobs' turn: they say how priorities work
			for p := range poisons {
				fmt.Fprintln(&jobs, p)
			}
		}
	}
	// submit refuses a bad witness: it comes from a client that skips the check
	submitRaw(t, q, "bad-witness", "chain", []byte("xxxxx"))
	fmt.Fprintf(&jobs, `{"id":"bad-circuit","circuit":"nope","generate":{"seed":1}}`+"\n")
	t0 := time.Now()
	run(t, bin, jobs.String(), "submit", "--nats", url, "-")
	var high strings.Builder
	for i := range 10 {
		fmt.Fprintf(&high, `{"id":"h%d","circuit":"chain","generate":{"seed":%d}}`+"\n", i, 1000+i)
	}
	run(t, bin, high.String(), "submit", "--nats", url, "--priority", "high", "-")

	// The workers start with every job waiting, the high ones queued last:
	// they must take the high ones first. (Started before the submits, they
	// would race the submits for the normal jobs, and the test would say
	// how fast submit is, not how priorities work.)
	var metricsAddr [3]string
	var workers [3]*proc
	var mu sync.Mutex // workers, metricsAddr, restarted: the OOM killer restarts them
	var restarted [3]bool
	for i := range workers {
		metricsAddr[i] = freePort(t)
		workers[i] = start(t, bin, fmt.Sprint("worker", i), workerArgs(i, metricsAddr[i])...)
	}
	for _, a := range metricsAddr {
		waitHealthy(t, a)
	}
	// The OOM killer of circuit stall's loaders: each worker's log is read
	// as it grows; one that starts to load stall is killed and started again.
	stopKiller := make(chan struct{})
	killerDone := make(chan int)
	go func() {
		kills := 0
		read := map[string]int{} // log → bytes looked at
		defer func() { killerDone <- kills }()
		for {
			select {
			case <-stopKiller:
				return
			case <-time.After(20 * time.Millisecond):
			}
			mu.Lock()
			for i, w := range workers {
				b, _ := os.ReadFile(w.log)
				fresh := string(b[read[w.log]:])
				read[w.log] = len(b)
				if !strings.Contains(fresh, "circuit stall: fetching it from the store and loading it") {
					continue
				}
				w.cmd.Process.Signal(syscall.SIGKILL)
				<-w.done
				kills++
				if strings.Contains(string(b), "circuit stall resident") {
					t.Errorf("worker %d loaded circuit stall before it was killed", i)
				}
				metricsAddr[i] = freePort(t)
				workers[i] = start(t, bin, fmt.Sprintf("worker%d-%d", i, kills), workerArgs(i, metricsAddr[i])...)
				restarted[i] = true
			}
			mu.Unlock()
		}
	}()

	// SIGKILL worker 0 mid-stream, once 40 results and the high jobs' are in
	// (a high job the killed worker held would come back only after the ack
	// wait, which says nothing of priorities), and restart it.
	total := 212 + len(poisons)
	count := func() int {
		info, err := q.Results.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return int(info.State.Msgs)
	}
	highDone := func() bool {
		for i := range 10 {
			if _, err := q.Results.GetLastMsgForSubject(context.Background(), fmt.Sprint("zkpipe.results.h", i)); err != nil {
				return false
			}
		}
		return true
	}
	for start := time.Now(); count() < 40 || !highDone(); {
		if time.Since(start) > time.Minute {
			t.Fatalf("%d results after a minute", count())
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	workers[0].cmd.Process.Signal(syscall.SIGKILL)
	<-workers[0].done
	killedAt := count()
	t.Logf("worker0 killed after %d results", killedAt)
	if killedAt > total-30 {
		t.Fatalf("worker0 killed after %d of %d results: not mid-stream", killedAt, total)
	}
	metricsAddr[0] = freePort(t)
	workers[0] = start(t, bin, "worker0'", workerArgs(0, metricsAddr[0])...)
	mu.Unlock()

	deadline := waitEnd(t)
	for count() < total {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d results by the test's deadline", count(), total)
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(t0)
	t.Logf("%d results in %s", total, elapsed.Round(time.Millisecond))
	close(stopKiller)
	if kills := <-killerDone; kills != 3 {
		t.Errorf("%d workers killed loading circuit stall, want 3: its first delivery, then two alone (--max-deliveries 2)", kills)
	}
	// a worker whose engine got stuck on a poison job goes on with a new one
	for i, w := range workers {
		select {
		case <-w.done:
			t.Errorf("worker %d exited: %v", i, w.cmd.ProcessState)
		default:
		}
	}
	settled(t, q)
	// nothing left behind: the bad witness left with its dead letter, and
	// no hand-back counts outlive their jobs
	noneLeft(t, q)

	// /metrics of the workers parse, and one at least counted its proofs
	// (the OOM killer of stall's loaders may have restarted any, after
	// which it may have proven nothing yet)
	var whyNot []string
	for i := range workers {
		waitHealthy(t, metricsAddr[i])
		err := scrapeWorkerErr(metricsAddr[i])
		if err == nil {
			whyNot = nil
			break
		}
		whyNot = append(whyNot, fmt.Sprintf("worker %d (restarted %v): %v", i, restarted[i], err))
	}
	for _, w := range whyNot {
		t.Error(w)
	}

	out, resultsFile := filepath.Join(tmp, "out"), filepath.Join(tmp, "results.jsonl")
	runFailed(t, bin, "results", "--nats", url, "--out", out, "--results", resultsFile) // the two bad jobs
	lines, err := stream.ReadResultsFile(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	pos := map[string]int{}
	for i, r := range lines {
		seen[r.ID]++
		pos[r.ID] = i
		switch {
		case strings.HasPrefix(r.ID, "bad-"):
			if r.Error == "" {
				t.Errorf("%s: no error", r.ID)
			}
		case strings.HasPrefix(r.ID, "poison-"):
			want := ""
			for p, w := range poisons {
				if strings.Contains(p, `"`+r.ID+`"`) {
					want = w
				}
			}
			if !strings.Contains(r.Error, "job "+r.ID+": ") || !strings.Contains(r.Error, want) {
				t.Errorf("%s: not terminated with its error (%q): %+v", r.ID, want, r)
			}
			t.Logf("%s: %s", r.ID, r.Error)
		case r.Error != "":
			t.Errorf("%s: %s", r.ID, r.Error)
		default:
			if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
				t.Errorf("%s: %v", r.ID, err)
			}
		}
	}
	if len(seen) != total {
		t.Errorf("%d ids have results, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d result lines", id, n)
		}
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("partial file %s left in --out", e.Name())
		}
	}
	// High jobs, submitted behind 200 normal ones, all finish before the
	// last 100 normal ones: waiting together, high ones are taken first
	// (a worker's first pull may mix in normal ones once the high ones run out).
	normalPos := []int{}
	for _, r := range lines {
		if strings.HasPrefix(r.ID, "n") {
			normalPos = append(normalPos, pos[r.ID])
		}
	}
	limit := normalPos[len(normalPos)-100]
	for i := range 10 {
		if p := pos[fmt.Sprint("h", i)]; p > limit {
			t.Errorf("high job h%d finished at %d, after the 100th normal job from the end (%d)", i, p, limit)
		}
	}
	// The bad jobs were terminated, not redelivered.
	for _, p := range fleet.Priorities {
		c, _ := q.Jobs.Consumer(context.Background(), p)
		info, err := c.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending > 0 || info.NumPending > 0 {
			t.Errorf("consumer %s: %d pending acks, %d pending", p, info.NumAckPending, info.NumPending)
		}
	}
}

func scrapeWorker(t *testing.T, addr string) {
	t.Helper()
	if err := scrapeWorkerErr(addr); err != nil {
		t.Error(err)
	}
}

// scrapeWorkerErr says what the worker's /metrics at addr lacks: it must
// parse, have the worker's families and count proofs.
func scrapeWorkerErr(addr string) error {
	r, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err
	}
	defer r.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bufio.NewReader(r.Body))
	if err != nil {
		return fmt.Errorf("/metrics does not parse: %v", err)
	}
	for _, name := range []string{"zkpipe_proofs_total", "zkpipe_stage_run_seconds", "zkpipe_fleet_jobs_total", "zkpipe_fleet_queue_seconds", "zkpipe_rss_bytes", "zkpipe_stage_jobs"} {
		if fams[name] == nil {
			return fmt.Errorf("/metrics has no %s", name)
		}
	}
	n := 0.0
	for _, m := range fams["zkpipe_proofs_total"].Metric {
		n += m.GetCounter().GetValue()
	}
	if n == 0 {
		return fmt.Errorf("the worker at %s counted no proofs", addr)
	}
	return nil
}

// --job-timeout takes a positive duration: 0 or less would switch the
// bound off.
func TestWorkerRefusesNoJobTimeout(t *testing.T) {
	bin := binary(t)
	_, url := startQueue(t, 5*time.Second)
	// 0 is the worker's own refusal; a negative one every duration flag's
	for d, want := range map[string]string{"0s": "want a positive duration", "-1s": "a duration must be 0 or more"} {
		out, err := exec.Command(bin, "worker", "--nats", url, "--cache", t.TempDir(), "--job-timeout", d).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--job-timeout "+d) || !strings.Contains(string(out), want) {
			t.Errorf("--job-timeout %s: %v\n%s", d, err, out)
		}
	}
}

func TestServeRefusesOpenListener(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "serve", "--nats-listen", "0.0.0.0:0", "--store", t.TempDir(), "--mem-status", "0")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs auth") {
		t.Fatalf("serve on 0.0.0.0 without auth: %v\n%s", err, out)
	}
}

// TestServeAlone: zkpipe serve is the whole service on one host.
func TestServeAlone(t *testing.T) {
	bin := binary(t)
	dir := circuitDir(t)
	tmp := t.TempDir()
	nats, metricsAddr := freePort(t), freePort(t)
	url := "nats://" + nats
	start(t, bin, "serve", "serve", "--nats-listen", nats, "--store", filepath.Join(tmp, "store"),
		"--cache", filepath.Join(tmp, "cache"), "--mem-status", "0", "--metrics-addr", metricsAddr)
	waitHealthy(t, metricsAddr)
	run(t, bin, "", "circuit", "push", "--nats", url, dir)
	var jobs strings.Builder
	for i := range 5 {
		fmt.Fprintf(&jobs, `{"id":"s%d","generate":{"seed":%d}}`+"\n", i, i)
	}
	run(t, bin, jobs.String(), "submit", "--nats", url, "-")
	out, resultsFile := filepath.Join(tmp, "out"), filepath.Join(tmp, "results.jsonl")
	// --follow until five lines are in, then stop it as a user would.
	res := start(t, bin, "results", "results", "--nats", url, "--out", out, "--results", resultsFile, "--follow")
	deadline := waitEnd(t)
	for {
		lines, _ := stream.ReadResultsFile(resultsFile)
		if len(lines) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d results by the test's deadline", len(lines))
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.cmd.Process.Signal(syscall.SIGINT)
	<-res.done
	lines, err := stream.ReadResultsFile(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lines {
		if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
			t.Errorf("%s: %v", r.ID, err)
		}
	}
	scrapeWorker(t, metricsAddr)

	// A planted outputs object, and results against the user's own key:
	// the five real proofs say what they were verified with, the planted
	// one is a failed line, and zkpipe results ends with exit code 2.
	q := openQueue(t, url, 5*time.Second)
	proof, public := realProof(t)
	plant(t, q, "planted", map[string][]byte{"planted.proof": proof, "planted.public": tamper(public)})
	checkedFile := filepath.Join(tmp, "checked.jsonl")
	runFailed(t, bin, "results", "--nats", url, "--out", filepath.Join(tmp, "out2"), "--results", checkedFile, "--circuit", dir)
	lines, err = stream.ReadResultsFile(checkedFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6", len(lines))
	}
	for _, r := range lines {
		switch {
		case r.ID == "planted":
			if !strings.Contains(r.Error, "job planted: stored proof rejected by --circuit "+dir) || r.Proof != "" {
				t.Errorf("planted: %+v", r)
			}
		case r.Error != "" || r.VerifiedWith != "--circuit "+dir:
			t.Errorf("%s: %+v", r.ID, r)
		}
	}

	// results --jobs: a valid proof of another witness stored under a
	// witness job of the user's jobs file is a failed line (exit code 2);
	// the generate jobs say they are not bound.
	_, _, witness1 := proveSeed(t, dir, 1)
	proof2, public2, _ := proveSeed(t, dir, 2)
	w1 := filepath.Join(tmp, "swapped.witness")
	os.WriteFile(w1, witness1, 0o644)
	plant(t, q, "swapped", map[string][]byte{"swapped.proof": proof2, "swapped.public": public2})
	jobsFile := filepath.Join(tmp, "jobs.jsonl")
	os.WriteFile(jobsFile, []byte(jobs.String()+fmt.Sprintf(`{"id":"swapped","witness":%q}`, w1)+"\n"), 0o644)
	boundFile := filepath.Join(tmp, "bound.jsonl")
	runFailed(t, bin, "results", "--nats", url, "--out", filepath.Join(tmp, "out3"), "--results", boundFile, "--circuit", dir, "--jobs", jobsFile)
	if lines, err = stream.ReadResultsFile(boundFile); err != nil || len(lines) != 7 {
		t.Fatalf("%d lines, %v; want 7", len(lines), err)
	}
	for _, r := range lines {
		switch {
		case r.ID == "swapped":
			if !strings.Contains(r.Error, "job swapped: the stored proof is for other public inputs") || r.Proof != "" {
				t.Errorf("swapped: %+v", r)
			}
		case r.ID == "planted":
		case r.Error != "" || r.Statement != "not bound (generate job)":
			t.Errorf("%s with --jobs: %+v", r.ID, r)
		}
	}
}
