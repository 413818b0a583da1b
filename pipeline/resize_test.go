package pipeline_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/zkpipe/zkpipe/pipeline"
)

// concurrency counts the runs of a stage in progress and the most seen at once.
type concurrency struct {
	now, peak atomic.Int64
}

func (c *concurrency) run(d time.Duration) func(context.Context, *job) error {
	return func(ctx context.Context, _ *job) error {
		n := c.now.Add(1)
		defer c.now.Add(-1)
		for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
		}
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// A TestX that only calls synctest.Test(t, testX) runs testX in a bubble:
// the stages' timers run on its fake clock, so sleeps cost no time and
// what happens in one is the same on a loaded machine.

// waitFor lets the bubble's clock run, a millisecond at a time, until cond
// holds, for up to ten seconds of it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for synctest.Wait(); !cond(); synctest.Wait() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A stage grows and shrinks while jobs flow through it: every job reaches
// the sink once, through every stage in order, with ordered timings; the
// stage never runs more jobs at once than it has workers, worker ids stay
// below the stage's maximum, and each output is closed once, after its
// stage's last worker (a send on a closed channel, or a second close,
// would panic the test).
func TestAStageGrowsAndShrinksWithJobsInFlight(t *testing.T) {
	defer goleak.VerifyNone(t) // once the bubble is gone
	synctest.Test(t, testAStageGrowsAndShrinksWithJobsInFlight)
}

func testAStageGrowsAndShrinksWithJobsInFlight(t *testing.T) {
	const most = 8
	var mid concurrency
	a := stage("a", 1, 2, nil)
	a.MaxWorkers = most
	b := stage("b", 1, 2, mid.run(100*time.Microsecond))
	b.MaxWorkers = most
	c := stage("c", 2, 1, nil) // no MaxWorkers: fixed
	p := pipeline.New(a, b, c)

	src := make(chan *job)
	done := make(chan []pipeline.Result[*job], 1)
	go func() { done <- collect(t, p, src) }()
	// The source keeps b backed up until the test has churned enough.
	enough := make(chan struct{})
	sent := make(chan int, 1)
	go func() {
		i := 0
		defer func() { close(src); sent <- i }()
		for ; ; i++ {
			select {
			case src <- &job{id: i}:
			case <-enough:
				return
			}
		}
	}()

	// Grow b: with a backlog, all six workers end up running at once.
	if err := p.SetWorkers("b", 6); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "six of b's jobs at once", func() bool { return mid.now.Load() == 6 })
	// Shrink b to one: the extra workers leave after their jobs.
	if err := p.SetWorkers("b", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b down to one job at a time", func() bool { return mid.now.Load() <= 1 })
	mid.peak.Store(0)
	time.Sleep(20 * time.Millisecond) // two hundred of b's jobs, on the bubble's clock
	synctest.Wait()
	if pk := mid.peak.Load(); pk > 1 {
		t.Errorf("b ran %d jobs at once after shrinking to one worker", pk)
	}
	if s := p.Snapshot()[1]; s.Workers != 1 || s.Name != "b" {
		t.Errorf("snapshot of b %+v, want 1 worker", s)
	}
	// Then at random, on two stages, until the source is done.
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
			for _, name := range []string{"a", "b"} {
				if err := p.SetWorkers(name, 1+rand.IntN(most)); err != nil && !strings.Contains(err.Error(), "has finished") {
					t.Errorf("SetWorkers(%s): %v", name, err)
				}
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	close(enough)
	n := <-sent
	res := <-done
	close(stop)
	churn.Wait()

	if len(res) != n || n < 100 {
		t.Fatalf("%d results, want %d", len(res), n)
	}
	seen := make([]bool, n)
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("job %d: %v", r.Job.id, r.Err)
		}
		if seen[r.Job.id] {
			t.Fatalf("job %d reached the sink twice", r.Job.id)
		}
		seen[r.Job.id] = true
		if fmt.Sprint(r.Job.trail) != "[a b c]" || len(r.Timings) != 3 {
			t.Fatalf("job %d ran %v with %d timings", r.Job.id, r.Job.trail, len(r.Timings))
		}
		for i, tm := range r.Timings {
			if tm.Worker < 0 || tm.Worker >= most || (i == 2 && tm.Worker >= 2) {
				t.Errorf("job %d: worker %d in stage %s", r.Job.id, tm.Worker, tm.Stage)
			}
			if tm.Started.Before(tm.Queued) || tm.Finished.Before(tm.Started) || (i > 0 && tm.Queued.Before(r.Timings[i-1].Finished)) {
				t.Errorf("job %d: timings out of order in %s: %+v", r.Job.id, tm.Stage, tm)
			}
		}
	}
	if pk := mid.peak.Load(); pk > most {
		t.Errorf("b ran %d jobs at once, more than its %d workers at most", pk, most)
	}
	if err := p.SetWorkers("b", 2); err == nil {
		t.Error("SetWorkers after the run: want an error")
	}
}

func TestSetWorkersBounds(t *testing.T) {
	s := stage("s", 2, 1, nil)
	s.MaxWorkers = 4
	p := pipeline.New(s, stage("fixed", 2, 1, nil))
	for _, c := range []struct {
		stage string
		n     int
		want  string
	}{
		{"s", 0, "0 workers, want 1 to 4"},
		{"s", 5, "5 workers, want 1 to 4"},
		{"fixed", 3, "3 workers, want 1 to 2"},
		{"nope", 1, `no stage "nope"`},
	} {
		if err := p.SetWorkers(c.stage, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetWorkers(%s, %d) = %v, want %q", c.stage, c.n, err, c.want)
		}
	}
	// Before Run: the stage starts with the workers set.
	if err := p.SetWorkers("s", 4); err != nil {
		t.Fatal(err)
	}
	res := collect(t, p, feed(context.Background(), 40))
	ids := map[int]bool{}
	for _, r := range res {
		ids[r.Timings[0].Worker] = true
	}
	if len(res) != 40 || len(ids) > 4 {
		t.Errorf("%d results, workers %v", len(res), ids)
	}
}

// A stage shrunk while cancelled leaves nothing behind, and its jobs go to Drop.
func TestCancelWhileShrinkingLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t) // once the bubble is gone
	synctest.Test(t, testCancelWhileShrinkingLeaksNothing)
}

func testCancelWhileShrinkingLeaksNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mid concurrency
	b := stage("b", 4, 2, mid.run(time.Hour))
	b.MaxWorkers = 6
	p := pipeline.New(stage("a", 1, 1, nil), b)
	var dropped atomic.Int64
	p.Drop = func(*job) { dropped.Add(1) }
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx, feed(ctx, 1_000_000), func(pipeline.Result[*job]) {}) }()
	waitFor(t, "four of b's jobs at once", func() bool { return mid.now.Load() == 4 })
	if err := p.SetWorkers("b", 6); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "six of b's jobs at once", func() bool { return mid.now.Load() == 6 })
	if err := p.SetWorkers("b", 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	if dropped.Load() < 6 {
		t.Errorf("%d jobs dropped, want at least the six b was running", dropped.Load())
	}
}
