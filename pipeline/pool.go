package pipeline

import (
	"fmt"
	"sync"
)

// pool is one stage's workers: how many it should have and how many run.
// They are counted under mu so that the runtime knows when the last worker
// of the stage has gone, however many SetWorkers started or retired in
// between: only then is the stage's output closed (rule 1 of the package).
type pool struct {
	mu     sync.Mutex
	want   int
	live   int
	max    int
	taken  []bool      // taken[w]: a live worker has id w (ids are reused, so a result's worker stays below max)
	spawn  func(w int) // runs worker w; nil until Run starts the stage
	ending bool        // the input closed or the run was cancelled: no worker starts again
	fewer  chan struct{}
	done   chan struct{} // closed when ending and no worker is left
	wg     sync.WaitGroup
}

func newPool(want, max int) *pool {
	return &pool{want: want, max: max, taken: make([]bool, max), fewer: make(chan struct{}), done: make(chan struct{})}
}

func (pl *pool) wanted() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.want
}

// set asks for n workers. Fewer is a broadcast: fewer is closed, so that
// workers idle in their receive look again whether they are one too many;
// a busy worker looks when its job is done.
func (pl *pool) set(n int, stage string) error {
	if n < 1 || n > pl.max {
		return fmt.Errorf("pipeline: stage %s: %d workers, want 1 to %d", stage, n, pl.max)
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.ending {
		return fmt.Errorf("pipeline: stage %s has finished", stage)
	}
	pl.want = n
	pl.growLocked()
	if pl.live > pl.want {
		close(pl.fewer)
		pl.fewer = make(chan struct{})
	}
	return nil
}

// start runs the stage's workers, each as spawn(id).
func (pl *pool) start(spawn func(w int)) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.spawn = spawn
	pl.growLocked()
}

func (pl *pool) growLocked() {
	if pl.spawn == nil || pl.ending {
		return
	}
	for pl.live < pl.want {
		w := 0
		for pl.taken[w] { // live < want ≤ max: a free id exists
			w++
		}
		pl.taken[w] = true
		pl.live++
		pl.wg.Add(1) // never after done: done needs ending, and ending stops growth
		go func() {
			defer pl.wg.Done()
			pl.spawn(w)
		}()
	}
}

// stay tells worker w, between jobs, whether to go on; if so, fewer is the
// channel that tells it to look again. A worker told to leave has already
// been counted out. The stage never retires its last worker (want ≥ 1), so
// done is left to end.
func (pl *pool) stay(w int) (fewer <-chan struct{}, leave bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.live > pl.want {
		pl.live--
		pl.taken[w] = false
		return nil, true
	}
	return pl.fewer, false
}

// end counts out worker w, which stops because the input closed or the run
// was cancelled; both are for good, so every other worker will end too.
func (pl *pool) end(w int) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.ending = true
	pl.live--
	pl.taken[w] = false
	if pl.live == 0 {
		close(pl.done)
	}
}

// wait returns once every worker the stage ever had has exited.
func (pl *pool) wait() {
	<-pl.done
	pl.wg.Wait()
}
