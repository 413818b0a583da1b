package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/conc/panics"
	"go.uber.org/goleak"

	"github.com/zkpipe/zkpipe/pipeline"
)

type job struct {
	id    int
	trail []string // stages that ran, in order
	mu    sync.Mutex
}

func (j *job) visit(s string) {
	j.mu.Lock()
	j.trail = append(j.trail, s)
	j.mu.Unlock()
}

func stage(name string, workers, queue int, run func(ctx context.Context, j *job) error) pipeline.Stage[*job] {
	return pipeline.Stage[*job]{Name: name, Workers: workers, Queue: queue, Run: func(ctx context.Context, j *job, _ int) error {
		j.visit(name)
		if run == nil {
			return nil
		}
		return run(ctx, j)
	}}
}

func feed(ctx context.Context, n int) <-chan *job {
	src := make(chan *job)
	go func() {
		defer close(src)
		for i := range n {
			select {
			case src <- &job{id: i}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return src
}

func collect(t *testing.T, p *pipeline.Pipeline[*job], src <-chan *job) []pipeline.Result[*job] {
	t.Helper()
	var out []pipeline.Result[*job]
	if err := p.Run(context.Background(), src, func(r pipeline.Result[*job]) { out = append(out, r) }); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out
}

func TestEveryJobPassesEveryStageWithOrderedTimings(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := pipeline.New(stage("a", 3, 2, nil), stage("b", 1, 0, nil), stage("c", 2, 5, nil))
	res := collect(t, p, feed(context.Background(), 50))
	if len(res) != 50 {
		t.Fatalf("%d results, want 50", len(res))
	}
	seen := map[int]bool{}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("job %d: %v", r.Job.id, r.Err)
		}
		seen[r.Job.id] = true
		if fmt.Sprint(r.Job.trail) != "[a b c]" {
			t.Errorf("job %d ran %v", r.Job.id, r.Job.trail)
		}
		if len(r.Timings) != 3 {
			t.Fatalf("job %d: %d timings", r.Job.id, len(r.Timings))
		}
		for i, tm := range r.Timings {
			if tm.Stage != []string{"a", "b", "c"}[i] {
				t.Errorf("timing %d is for stage %s", i, tm.Stage)
			}
			if tm.Started.Before(tm.Queued) || tm.Finished.Before(tm.Started) {
				t.Errorf("job %d stage %s: queued %v started %v finished %v", r.Job.id, tm.Stage, tm.Queued, tm.Started, tm.Finished)
			}
			if i > 0 && tm.Queued.Before(r.Timings[i-1].Finished) {
				t.Errorf("job %d queued at %s before leaving %s", r.Job.id, tm.Stage, r.Timings[i-1].Stage)
			}
		}
	}
	if len(seen) != 50 {
		t.Errorf("%d distinct jobs, want 50", len(seen))
	}
}

func TestAFailedJobSkipsLaterStagesAndOthersGoOn(t *testing.T) {
	defer goleak.VerifyNone(t)
	bad := errors.New("bad witness")
	p := pipeline.New(
		stage("parse", 2, 1, nil),
		stage("solve", 2, 1, func(_ context.Context, j *job) error {
			if j.id%3 == 0 {
				return bad
			}
			return nil
		}),
		stage("prove", 2, 1, nil),
	)
	res := collect(t, p, feed(context.Background(), 30))
	if len(res) != 30 {
		t.Fatalf("%d results, want 30", len(res))
	}
	for _, r := range res {
		if r.Job.id%3 == 0 {
			if !errors.Is(r.Err, bad) || r.Stage != "solve" {
				t.Errorf("job %d: err %v at %q, want bad witness at solve", r.Job.id, r.Err, r.Stage)
			}
			if fmt.Sprint(r.Job.trail) != "[parse solve]" || len(r.Timings) != 2 {
				t.Errorf("failed job %d ran %v with %d timings", r.Job.id, r.Job.trail, len(r.Timings))
			}
		} else if r.Err != nil || len(r.Timings) != 3 {
			t.Errorf("job %d: err %v, %d timings", r.Job.id, r.Err, len(r.Timings))
		}
	}
}

func TestAPanicBecomesThatJobsErrorWithItsStack(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := pipeline.New(stage("boom", 2, 1, func(_ context.Context, j *job) error {
		if j.id == 4 {
			panic(fmt.Sprintf("kaboom %d", j.id))
		}
		return nil
	}), stage("after", 1, 1, nil))
	res := collect(t, p, feed(context.Background(), 10))
	if len(res) != 10 {
		t.Fatalf("%d results, want 10", len(res))
	}
	for _, r := range res {
		var pe *panics.ErrRecovered
		if r.Job.id == 4 {
			if !errors.As(r.Err, &pe) || pe.Value != "kaboom 4" || len(pe.Stack) == 0 || r.Stage != "boom" {
				t.Fatalf("job 4: err %v (%T) at %q", r.Err, r.Err, r.Stage)
			}
		} else if r.Err != nil {
			t.Errorf("job %d: %v", r.Job.id, r.Err)
		}
	}
}

// A blocked last stage must stop the source after a bounded number of jobs:
// workers plus queue depths, never the whole input.
func TestASlowStagePushesBackOnTheSource(t *testing.T) {
	defer goleak.VerifyNone(t)
	gate := make(chan struct{})
	p := pipeline.New(
		stage("a", 1, 1, nil),
		stage("b", 2, 1, nil),
		stage("slow", 1, 1, func(ctx context.Context, _ *job) error {
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}),
	)
	var pulled atomic.Int64
	src := make(chan *job)
	go func() {
		defer close(src)
		for i := range 1000 {
			src <- &job{id: i}
			pulled.Add(1)
		}
	}()
	done := make(chan []pipeline.Result[*job])
	go func() { done <- collect(t, p, src) }()

	// Wait until the pipeline is full and every goroutine in it is blocked:
	// slow runs one job and holds one in its queue while b's two workers
	// wait to hand theirs over; b's queue holds one while a's worker waits;
	// a's queue holds one while the pipeline's source goroutine waits. In
	// that state nothing can move, so the count the source pulled is final.
	full := []pipeline.StageCount{{Name: "a", Queued: 2, Workers: 1}, {Name: "b", Queued: 2, Workers: 2}, {Name: "slow", Queued: 3, Running: 1, Busy: 1, Workers: 1}}
	// queues (1+1+1) + workers (1+2+1) + one held by the source goroutine
	const bound = 3 + 4 + 1
	deadline := time.Now().Add(10 * time.Second)
	for fmt.Sprint(p.Snapshot()) != fmt.Sprint(full) || pulled.Load() < bound {
		if got := pulled.Load(); got > bound {
			t.Fatalf("source got %d jobs ahead of a blocked stage; bound is %d", got, bound)
		}
		if time.Now().After(deadline) {
			t.Fatalf("pipeline never filled: %+v, %d pulled", p.Snapshot(), pulled.Load())
		}
		runtime.Gosched()
	}
	if got := pulled.Load(); got != bound {
		t.Fatalf("source got %d jobs ahead of a blocked stage; bound is %d", got, bound)
	}
	snap := p.Snapshot()
	if snap[2].Running != 1 {
		t.Errorf("snapshot %+v: want 1 job running in the slow stage", snap)
	}
	close(gate)
	if res := <-done; len(res) != 1000 {
		t.Fatalf("%d results after opening the gate, want 1000", len(res))
	}
}

func TestCancellationStopsTheStreamAndLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 100)
	p := pipeline.New(
		stage("a", 4, 2, nil),
		stage("block", 3, 2, func(ctx context.Context, _ *job) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}),
		stage("c", 1, 1, nil),
	)
	errc := make(chan error)
	go func() {
		errc <- p.Run(ctx, feed(ctx, 1_000_000), func(pipeline.Result[*job]) {})
	}()
	for range 3 {
		<-started
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

func TestNewRejectsMisconfiguredStages(t *testing.T) {
	for _, s := range []pipeline.Stage[*job]{
		{Name: "", Workers: 1, Run: func(context.Context, *job, int) error { return nil }},
		{Name: "x", Workers: 0, Run: func(context.Context, *job, int) error { return nil }},
		{Name: "x", Workers: 1},
		{Name: "x", Workers: 1, Queue: -1, Run: func(context.Context, *job, int) error { return nil }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted %+v", s)
				}
			}()
			pipeline.New(s)
		}()
	}
}

// Admission runs before a stage's work: its wait counts as queue time, and
// its error fails the job at that stage without running it.
func TestAdmissionWaitsAsQueueTimeAndItsErrorFailsTheJob(t *testing.T) {
	defer goleak.VerifyNone(t)
	full := errors.New("over budget")
	var mu sync.Mutex
	entered, left := map[int]time.Time{}, map[int]time.Time{}
	gate := make(chan struct{})
	admit := stage("synthesize", 1, 1, nil)
	admit.Admit = func(ctx context.Context, j *job) error {
		mu.Lock()
		entered[j.id] = time.Now()
		mu.Unlock()
		if j.id == 2 {
			return full
		}
		<-gate
		mu.Lock()
		left[j.id] = time.Now()
		mu.Unlock()
		return nil
	}
	p := pipeline.New(stage("parse", 1, 1, nil), admit, stage("prove", 1, 1, nil))
	close(gate) // admission waits on the gate; the order of events is what is checked
	res := collect(t, p, feed(context.Background(), 4))
	if len(res) != 4 {
		t.Fatalf("%d results, want 4", len(res))
	}
	for _, r := range res {
		if r.Job.id == 2 {
			if !errors.Is(r.Err, full) || r.Stage != "synthesize" || fmt.Sprint(r.Job.trail) != "[parse]" {
				t.Errorf("job 2: err %v at %q, ran %v", r.Err, r.Stage, r.Job.trail)
			}
			continue
		}
		if r.Err != nil {
			t.Fatalf("job %d: %v", r.Job.id, r.Err)
		}
		// queue time spans admission: queued ≤ entered < left ≤ started
		tm := r.Timings[1]
		if tm.Queued.After(entered[r.Job.id]) || tm.Started.Before(left[r.Job.id]) {
			t.Errorf("job %d: admission (%v … %v) outside its queue time (%v … %v)", r.Job.id,
				entered[r.Job.id], left[r.Job.id], tm.Queued, tm.Started)
		}
	}
}

// Jobs that cancellation keeps from the sink reach Drop, each exactly once,
// wherever they were: in a queue, in admission, in a Run that returned the
// context's error, or held by a worker waiting to hand it on.
func TestCancelledJobsReachDrop(t *testing.T) {
	defer goleak.VerifyNone(t)
	for round := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{}, 100) // a job blocks in Run or Admit
		blocking := stage("block", 2, 2, func(ctx context.Context, _ *job) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		})
		blocking.Admit = func(ctx context.Context, j *job) error {
			if j.id%4 == 3 { // some wait in admission until cancelled
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}
		p := pipeline.New(stage("a", 3, 2, nil), blocking, stage("c", 1, 1, nil))
		go func() {
			for range 2 {
				<-started
			}
			cancel()
		}()
		runUntilCancelled(t, ctx, round, p)
	}
}

// runUntilCancelled feeds p an endless source until ctx is cancelled (by
// the caller's stages or goroutines), and fails unless Run ends with the
// cancellation and every job the pipeline took reached the sink or Drop
// exactly once.
func runUntilCancelled(t *testing.T, ctx context.Context, round int, p *pipeline.Pipeline[*job]) {
	t.Helper()
	var mu sync.Mutex
	seen := map[int]int{}
	p.Drop = func(j *job) {
		mu.Lock()
		seen[j.id]++
		mu.Unlock()
	}
	var taken atomic.Int64
	src := make(chan *job)
	go func() {
		defer close(src)
		for i := 0; ; i++ {
			select {
			case src <- &job{id: i}:
				taken.Add(1)
			case <-ctx.Done():
				return
			}
		}
	}()
	err := p.Run(ctx, src, func(r pipeline.Result[*job]) {
		mu.Lock()
		seen[r.Job.id]++
		mu.Unlock()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("round %d: job %d reached sink or Drop %d times", round, id, n)
		}
	}
	// The source may count a send the pipeline took just as ctx ended;
	// every job it counts was taken, and each must be accounted for.
	if int64(len(seen)) < taken.Load() {
		t.Fatalf("round %d: %d jobs taken, %d reached sink or Drop", round, taken.Load(), len(seen))
	}
}

// Through counts the jobs past a stage and those before it, failed ones
// included: with the second stage held shut, every job is through the
// first (moved on or failed there), and only the ones failed at the first
// are through the second and third; once it opens, all are through all.
func TestThroughCountsJobsPastTheFirstStages(t *testing.T) {
	defer goleak.VerifyNone(t)
	gate := make(chan struct{})
	bad := errors.New("bad")
	p := pipeline.New(
		stage("a", 2, 1, func(_ context.Context, j *job) error {
			if j.id%5 == 0 {
				return bad
			}
			return nil
		}),
		stage("b", 1, 10, func(ctx context.Context, _ *job) error {
			select {
			case <-gate:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}),
		stage("c", 1, 1, func(_ context.Context, j *job) error {
			if j.id == 3 {
				return bad
			}
			return nil
		}),
	)
	done := make(chan []pipeline.Result[*job])
	go func() { done <- collect(t, p, feed(context.Background(), 10)) }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if s := p.Snapshot(); s[1].Queued+s[1].Running == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stage b never held the 8 jobs that passed a: %+v", p.Snapshot())
		}
		time.Sleep(time.Millisecond)
	}
	if a, b, c, x := p.Through("a"), p.Through("b"), p.Through("c"), p.Through("x"); a != 10 || b != 2 || c != 2 || x != 0 {
		t.Errorf("with b shut: through a %d, b %d, c %d, x %d; want 10, 2, 2 (the failed ones), 0", a, b, c, x)
	}
	close(gate)
	if res := <-done; len(res) != 10 {
		t.Fatalf("%d results", len(res))
	}
	for _, s := range []string{"a", "b", "c"} {
		if n := p.Through(s); n != 10 {
			t.Errorf("through %s: %d, want 10", s, n)
		}
	}
}
