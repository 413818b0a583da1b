package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/zkpipe/zkpipe/pipeline"
)

// batching is a stage of batch k whose RunBatch records each batch's size,
// and fails the jobs whose id fail says.
func batching(name string, k, queue int, sizes *[]int, mu *sync.Mutex, fail func(id int) error) pipeline.Stage[*job] {
	s := stage(name, 1, queue, nil)
	s.Batch = k
	s.RunBatch = func(ctx context.Context, jobs []*job, _ int) []error {
		mu.Lock()
		*sizes = append(*sizes, len(jobs))
		mu.Unlock()
		errs := make([]error, len(jobs))
		for i, j := range jobs {
			j.visit(name)
			if fail != nil {
				errs[i] = fail(j.id)
			}
		}
		return errs
	}
	return s
}

// A batching worker takes the jobs waiting in its queue, up to its batch,
// and each job keeps its own result, timing and error.
// (In a synctest bubble, so that the first batch can wait until nothing
// else moves.)
func TestABatchTakesTheWaitingJobsAndEachKeepsItsOwnResult(t *testing.T) {
	defer goleak.VerifyNone(t) // once the bubble is gone
	synctest.Test(t, testABatchTakesTheWaitingJobsAndEachKeepsItsOwnResult)
}

func testABatchTakesTheWaitingJobsAndEachKeepsItsOwnResult(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	bad := errors.New("bad job")
	// The first batch waits until the other jobs are all queued behind it,
	// so that the batches after it are full.
	var p *pipeline.Pipeline[*job]
	tail := batching("tail", 4, 12, &sizes, &mu, func(id int) error {
		if id%5 == 1 {
			return fmt.Errorf("job %d: %w", id, bad)
		}
		return nil
	})
	first := true
	run := tail.RunBatch
	tail.RunBatch = func(ctx context.Context, jobs []*job, w int) []error {
		if first {
			first = false
			synctest.Wait() // the other jobs are all in the queue: nothing else can move
			if q := p.Snapshot()[1].Queued; q != 12-len(jobs) {
				t.Errorf("a first batch of %d with %d queued behind it, want %d", len(jobs), q, 12-len(jobs))
			}
		}
		// every job of the batch runs, on one busy worker
		if c := p.Snapshot()[1]; c.Running != len(jobs) || c.Busy != 1 {
			t.Errorf("a batch of %d: %d jobs running, %d workers busy", len(jobs), c.Running, c.Busy)
		}
		return run(ctx, jobs, w)
	}
	p = pipeline.New(stage("a", 2, 2, nil), tail, stage("c", 1, 1, nil))
	res := collect(t, p, feed(context.Background(), 12))
	if len(res) != 12 {
		t.Fatalf("%d results, want 12", len(res))
	}
	for _, r := range res {
		if r.Job.id%5 == 1 {
			if !errors.Is(r.Err, bad) || r.Stage != "tail" || fmt.Sprint(r.Job.trail) != "[a tail]" {
				t.Errorf("job %d: err %v at %q, ran %v", r.Job.id, r.Err, r.Stage, r.Job.trail)
			}
			continue
		}
		if r.Err != nil || fmt.Sprint(r.Job.trail) != "[a tail c]" {
			t.Errorf("job %d: err %v, ran %v", r.Job.id, r.Err, r.Job.trail)
		}
		tm := r.Timings[1]
		if tm.Stage != "tail" || tm.Queued.After(tm.Started) || tm.Started.After(tm.Finished) {
			t.Errorf("job %d: timing %+v", r.Job.id, tm)
		}
	}
	total, full := 0, 0
	for _, s := range sizes {
		total += s
		if s > 4 {
			t.Errorf("a batch of %d, more than 4", s)
		}
		if s == 4 {
			full++
		}
	}
	if total != 12 || full < 2 {
		t.Errorf("batches %v: want 12 jobs, at least two full batches of 4 after the first", sizes)
	}
}

// A batch never waits for jobs that are not there: one job alone, with a
// batch of 8 and a source that stays open, is finished and reaches the
// sink while the source still waits.
func TestABatchNeverWaitsForMoreJobs(t *testing.T) {
	defer goleak.VerifyNone(t)
	var mu sync.Mutex
	var sizes []int
	p := pipeline.New(stage("a", 1, 1, nil), batching("tail", 8, 8, &sizes, &mu, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := make(chan *job)
	done := make(chan pipeline.Result[*job], 1)
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx, src, func(r pipeline.Result[*job]) { done <- r }) }()
	src <- &job{id: 7}
	select {
	case r := <-done:
		if r.Err != nil || r.Job.id != 7 {
			t.Fatalf("result %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lone job in a batching stage did not finish")
	}
	close(src)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sizes) != "[1]" {
		t.Errorf("batches %v, want [1]", sizes)
	}
}

// A panic in RunBatch fails every job of the batch, each with the panic;
// a RunBatch that returns the wrong number of errors fails them too.
func TestABatchPanicOrMiscountFailsItsJobs(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, c := range []struct {
		name string
		run  func([]*job) []error
		want string
	}{
		{"panic", func([]*job) []error { panic("boom") }, "boom"},
		{"miscount", func([]*job) []error { return nil }, "returned 0 errors"},
	} {
		s := stage("tail", 1, 4, nil)
		s.Batch = 4
		s.RunBatch = func(_ context.Context, jobs []*job, _ int) []error { return c.run(jobs) }
		res := collect(t, pipeline.New(stage("a", 1, 1, nil), s), feed(context.Background(), 6))
		if len(res) != 6 {
			t.Fatalf("%s: %d results", c.name, len(res))
		}
		for _, r := range res {
			if r.Err == nil || r.Stage != "tail" || !strings.Contains(r.Err.Error(), c.want) {
				t.Errorf("%s: job %d: %v at %q", c.name, r.Job.id, r.Err, r.Stage)
			}
		}
	}
}

// Cancelled while a batch runs, its jobs go to Drop, each once, with the
// rest of the stream's.
func TestACancelledBatchReachesDrop(t *testing.T) {
	defer goleak.VerifyNone(t)
	for round := range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		s := stage("tail", 2, 4, nil)
		s.Batch = 3
		s.RunBatch = func(ctx context.Context, jobs []*job, _ int) []error {
			cancel()
			<-ctx.Done()
			errs := make([]error, len(jobs))
			for i := range errs {
				if i%2 == 0 {
					errs[i] = ctx.Err()
				}
			}
			return errs
		}
		p := pipeline.New(stage("a", 2, 2, nil), s, stage("c", 1, 1, nil))
		runUntilCancelled(t, ctx, round, p)
	}
}

func TestNewRejectsABatchWithoutRunBatchOrWithAdmit(t *testing.T) {
	run := func(context.Context, *job, int) error { return nil }
	batch := func(context.Context, []*job, int) []error { return nil }
	admit := func(context.Context, *job) error { return nil }
	for _, s := range []pipeline.Stage[*job]{
		{Name: "x", Workers: 1, Run: run, Batch: 2},
		{Name: "x", Workers: 1, Run: run, Batch: 2, RunBatch: batch, Admit: admit},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted batch %d, RunBatch %v, Admit %v", s.Batch, s.RunBatch != nil, s.Admit != nil)
				}
			}()
			pipeline.New(s)
		}()
	}
}
