package adapt_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/zkpipe/zkpipe/adapt"
	"github.com/zkpipe/zkpipe/pipeline"
)

type job struct{ id int }

func sleepy(name string, workers, max int, d time.Duration) pipeline.Stage[*job] {
	return pipeline.Stage[*job]{Name: name, Workers: workers, MaxWorkers: max, Queue: 2,
		Run: func(ctx context.Context, _ *job, _ int) error {
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
}

// run streams jobs through p under a controller for d and returns the
// changes it made and the bottlenecks it kept. The tests call it in a
// synctest bubble: d and the stages' sleeps pass on its fake clock, so a
// window's rates are the stages' own, not a loaded machine's.
func run(t *testing.T, p *pipeline.Pipeline[*job], cfg adapt.Config, d time.Duration) ([]adapt.Change, []string) {
	t.Helper()
	var mu sync.Mutex
	var changes []adapt.Change
	var kept []string
	cfg.OnChange = func(c adapt.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() }
	cfg.OnKept = func(k string) { mu.Lock(); kept = append(kept, k); mu.Unlock() }
	ctrl := adapt.New(p, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	src := make(chan *job)
	go func() {
		defer close(src)
		for i := 0; ; i++ {
			select {
			case src <- &job{i}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	wg.Go(func() { ctrl.Run(ctx) })
	_ = p.Run(ctx, src, func(r pipeline.Result[*job]) {
		var runs []adapt.Run
		for _, tm := range r.Timings {
			runs = append(runs, adapt.Run{Stage: tm.Stage, Busy: tm.Busy()}) // sleeping: no CPU
		}
		ctrl.Observe(runs)
	})
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return changes, kept
}

func TestTheControllerGrowsTheSlowStageToItsMax(t *testing.T) {
	defer goleak.VerifyNone(t) // once the bubble is gone
	synctest.Test(t, testTheControllerGrowsTheSlowStageToItsMax)
}

func testTheControllerGrowsTheSlowStageToItsMax(t *testing.T) {
	p := pipeline.New(sleepy("a", 1, 0, 0), sleepy("slow", 1, 4, 3*time.Millisecond), sleepy("c", 1, 4, 0))
	changes, kept := run(t, p, adapt.Config{Cores: 8, Max: map[string]int{"slow": 4, "c": 4}, Every: 40 * time.Millisecond, MinJobs: 3}, 5*time.Second)
	last := map[string]int{}
	for _, c := range changes {
		if c.Stage != "slow" {
			t.Errorf("change %v: only slow is a bottleneck", c)
		}
		last[c.Stage] = c.To
	}
	if last["slow"] != 4 {
		t.Errorf("changes %v: slow should end at its 4 workers (each added one doubles, triples… the rate)", changes)
	}
	// On a loaded machine a growth may look like no gain once and be held
	// for a while; the last word is still slow at its most.
	if len(kept) == 0 || !strings.HasPrefix(kept[len(kept)-1], "slow is the bottleneck") || !strings.HasSuffix(kept[len(kept)-1], "4 is its most") {
		t.Errorf("kept %q: want slow at its most, said last", kept)
	}
}

func TestTheControllerLeavesAFixedBottleneck(t *testing.T) {
	defer goleak.VerifyNone(t) // once the bubble is gone
	synctest.Test(t, testTheControllerLeavesAFixedBottleneck)
}

func testTheControllerLeavesAFixedBottleneck(t *testing.T) {
	p := pipeline.New(sleepy("a", 2, 4, 0), sleepy("slow", 1, 0, 3*time.Millisecond), sleepy("c", 1, 4, 0))
	changes, kept := run(t, p, adapt.Config{Cores: 8, Max: map[string]int{"a": 4, "c": 4}, Every: 40 * time.Millisecond, MinJobs: 3}, time.Second)
	if len(changes) != 0 {
		t.Errorf("changes %v: the bottleneck is the user's and nothing else limits", changes)
	}
	if len(kept) != 1 || !strings.HasPrefix(kept[0], "slow is the bottleneck") || !strings.HasSuffix(kept[0], "its shape is the user's") {
		t.Errorf("kept %q: want slow, the user's, said once", kept)
	}
}
