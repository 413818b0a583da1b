package fleet_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/metrics"
	"github.com/zkpipe/zkpipe/stream"
)

// Intake: the fake starts each job as it takes it (order), so only a job
// sent and not yet taken waits; its places are its capacity, and a worker
// over it pulls as many as the capacity allows.
func (f *fakeProver) Intake() (int, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cap, int64(len(f.order))
}

// slowStart is a prover whose first stages have places for a few jobs and
// start one only when start lets it (a full memory budget, a slow
// synthesize): what it holds unstarted is what a worker must not pile up.
type slowStart struct {
	*fakeProver
	places  int
	start   chan struct{} // a token per job to start
	through atomic.Int64
}

func (s *slowStart) Intake() (int, int64) { return s.places, s.through.Load() }

func (s *slowStart) Run(ctx context.Context, jobs <-chan stream.Line, emit func(stream.Result) error) error {
	started := make(chan stream.Line)
	go func() {
		defer close(started)
		for l := range jobs {
			select {
			case <-s.start:
			case <-ctx.Done():
				return
			}
			s.through.Add(1)
			select {
			case started <- l:
			case <-ctx.Done():
				return
			}
		}
	}()
	return s.fakeProver.Run(ctx, started, emit)
}

// buffered is the fake taking every line sent to it at once, to prove them
// one at a time: a prover with room for all it is sent.
type buffered struct{ *fakeProver }

func (b *buffered) Run(ctx context.Context, jobs <-chan stream.Line, emit func(stream.Result) error) error {
	taken := make(chan stream.Line, 100)
	go func() {
		defer close(taken)
		for l := range jobs {
			taken <- l
		}
	}()
	return b.fakeProver.Run(ctx, taken, emit)
}

// backlog is the queue's jobs waiting, all priorities.
func backlog(t *testing.T, q *fleet.Queue) int {
	t.Helper()
	b, err := q.Backlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != len(fleet.Priorities) {
		t.Fatalf("backlog %v: want one figure per priority %v", b, fleet.Priorities)
	}
	n := 0
	for _, v := range b {
		n += v
	}
	return n
}

// A worker holds no more jobs than its prover can start soon: one whose
// first stages are full (places 2, nothing started) takes 2 of 20 jobs,
// whatever its capacity (16), and a worker that joins later proves the 18
// others. Before, the first took 16 (its capacity: every stage's workers
// and queue) and the second got 4.
func TestALateWorkerGetsWhatTheFirstCannotStart(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	stuck := &slowStart{fakeProver: newFake(t, 16), places: 2, start: make(chan struct{})}
	first := runWorker(t, q, stuck)
	if first.Capacity() != 16 {
		t.Fatalf("capacity %d, want the prover's 16", first.Capacity())
	}
	var lines []string
	for i := range 20 {
		lines = append(lines, genJob(fmt.Sprintf("s%02d", i)))
	}
	submit(t, q, "", lines...)
	for deadline := waitEnd(t); backlog(t, q) > 18; {
		if time.Now().After(deadline) {
			t.Fatalf("the first worker took no job by the test's deadline: backlog %d", backlog(t, q))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := backlog(t, q); n != 18 {
		t.Fatalf("the first worker, whose prover has 2 places and starts nothing, took %d of 20 jobs, want 2", 20-n)
	}
	late := newFake(t, 16)
	runWorker(t, q, late)
	// the late worker's results, then the first's two once it starts them
	for deadline := waitEnd(t); len(late.entered()) < 18; {
		if time.Now().After(deadline) {
			t.Fatalf("the late worker proved %d jobs by the test's deadline, want the 18 the first did not take", len(late.entered()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	stuck.start <- struct{}{}
	stuck.start <- struct{}{}
	res := waitResults(t, q, 20, 60*time.Second)
	for id, r := range res {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
	if a, b := len(stuck.entered()), len(late.entered()); a != 2 || b != 18 {
		t.Errorf("the first worker proved %d, the late one %d: want 2 and 18", a, b)
	}
	if n := backlog(t, q); n != 0 {
		t.Errorf("backlog %d once every job is answered", n)
	}
}

// --max-in-hand: a worker holds at most that many jobs, even where its
// prover could start more.
func TestMaxInHandCapsTheJobsHeld(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	p := &buffered{fakeProver: newFake(t, 16)}
	p.gate = make(chan struct{})
	w := fleet.NewWorker(q, p, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: testLog{t}, MaxInHand: 3})
	if w.Capacity() != 3 {
		t.Fatalf("capacity %d under MaxInHand 3", w.Capacity())
	}
	runUntilEnd(t, w)
	var lines []string
	for i := range 10 {
		lines = append(lines, genJob(fmt.Sprintf("m%d", i)))
	}
	submit(t, q, "", lines...)
	for deadline := waitEnd(t); backlog(t, q) > 7; {
		if time.Now().After(deadline) {
			t.Fatalf("backlog %d by the test's deadline, want 7 (3 in hand)", backlog(t, q))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := backlog(t, q); n != 7 || w.InHand() > 3 {
		t.Fatalf("%d jobs taken, %d in hand: want 3 at most", 10-n, w.InHand())
	}
	close(p.gate)
	waitResults(t, q, 10, 60*time.Second)
}

// Two workers over real engines, both up before 40 jobs are submitted,
// share them (each proves at least a quarter: each pulls only what its
// parse and synthesize can start soon), every proof verifies, and the
// queue's backlog on the workers' /metrics counts down to 0.
func TestTwoWorkersShareTheQueue(t *testing.T) {
	t.Chdir(t.TempDir()) // an engine's default output directory would be ./out
	q, _ := startQueue(t, 10*time.Second)
	pushChain(t, q)
	type worker struct {
		eng *engine.Engine
		w   *fleet.Worker
	}
	var ws [2]worker
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() {
		cancel()
		running.Wait()
	}()
	for i := range ws {
		eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Output: fleet.PerJobOutput{}, Log: testLog{t},
			Memory: engine.MemoryOptions{Budget: "off"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.Close() })
		w := fleet.NewWorker(q, eng, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: testLog{t}})
		ws[i] = worker{eng, w}
	}
	m := metrics.New(metrics.Options{Backlog: func() (map[string]int, error) {
		c, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		return q.Backlog(c)
	}})
	srv, err := metrics.Serve("127.0.0.1:0", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf(`{"id":"j%02d","circuit":"chain","generate":{"seed":%d}}`, i, i+1))
	}
	submit(t, q, "", lines...)
	// the backlog as /metrics says it: all 40 before the workers start
	// (whatever the machine's speed), then falling to 0
	seen := []int{scrapeBacklog(t, srv.Addr())}
	for i, w := range ws {
		running.Go(func() {
			if err := w.w.Run(ctx, ctx); err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("worker %d: %v", i, err)
			}
		})
	}
	for deadline := waitEnd(t); ; {
		n := scrapeBacklog(t, srv.Addr())
		seen = append(seen, n)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backlog still %d by the test's deadline (seen %v)", n, seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := waitResults(t, q, 40, 3*time.Minute)
	for id, r := range res {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
	if seen[0] != 40 {
		t.Errorf("backlog before the workers started: %d, want the 40 submitted (seen %v)", seen[0], seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] > seen[i-1] {
			t.Errorf("backlog rose from %d to %d (seen %v)", seen[i-1], seen[i], seen)
			break
		}
	}
	a, b := ws[0].eng.Snapshot().Proved, ws[1].eng.Snapshot().Proved
	t.Logf("worker 0 proved %d, worker 1 %d; backlog seen %v", a, b, seen)
	if a+b != 40 || a < 10 || b < 10 {
		t.Errorf("worker 0 proved %d jobs, worker 1 %d: want 40, each at least 10", a, b)
	}
}

// scrapeBacklog reads zkpipe_fleet_backlog_jobs from a real scrape, summed
// over its priorities (each of which must be there).
func scrapeBacklog(t *testing.T, addr string) int {
	t.Helper()
	r, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bufio.NewReader(r.Body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	f := fams["zkpipe_fleet_backlog_jobs"]
	if f == nil || len(f.Metric) != len(fleet.Priorities) {
		t.Fatalf("zkpipe_fleet_backlog_jobs: %v, want a series per priority", f)
	}
	n := 0.0
	for _, m := range f.Metric {
		n += m.GetGauge().GetValue()
	}
	return int(n)
}
