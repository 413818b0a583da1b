package provertest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/stages"
)

// Batches wraps a backend that batches tail MSMs (stages.TailBatcher) and
// records the size of every batch the tail-msm stage hands it. So that a
// small test stream does batch, its first batch waits (up to 30 s) until
// Fill jobs have passed batch-addition, the stage in front of tail-msm:
// they are then queued behind it.
type Batches struct {
	stages.Backend
	batcher stages.TailBatcher
	fill    int64

	added atomic.Int64
	once  sync.Once
	mu    sync.Mutex
	sizes []int
}

// NewBatches wraps b (which must also be a stages.TailBatcher).
func NewBatches(b stages.Backend, fill int) *Batches {
	return &Batches{Backend: b, batcher: b.(stages.TailBatcher), fill: int64(fill)}
}

func (b *Batches) BatchAddG1(ctx context.Context, s *gpu.Staged) (gpu.G1Sums, error) {
	defer b.added.Add(1)
	return b.Backend.BatchAddG1(ctx, s)
}

func (b *Batches) TailMSMG1Batch(ctx context.Context, ss []*gpu.Staged) ([]gpu.G1Sums, []error) {
	b.once.Do(func() {
		for t0 := time.Now(); b.added.Load() < b.fill && time.Since(t0) < 30*time.Second; {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // the last of them reach the queue
	})
	b.mu.Lock()
	b.sizes = append(b.sizes, len(ss))
	b.mu.Unlock()
	return b.batcher.TailMSMG1Batch(ctx, ss)
}

// Sizes are the batches' sizes, in the order they ran.
func (b *Batches) Sizes() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.sizes...)
}
