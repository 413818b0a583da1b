package provertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Batches wraps a backend (one that batches tail MSMs, or not) and
// records the size of every batch the tail-msm stage hands it. So that a
// small test stream does batch, its first batch waits (up to 30 s) until
// Fill jobs have passed batch-addition, the stage in front of tail-msm:
// they are then queued behind it.
type Batches struct {
	stages.Backend
	fill int64

	added atomic.Int64
	once  sync.Once
	mu    sync.Mutex
	sizes []int
}

// NewBatches wraps b.
func NewBatches(b stages.Backend, fill int) *Batches {
	return &Batches{Backend: b, fill: int64(fill)}
}

func (b *Batches) BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error) {
	defer b.added.Add(1)
	return b.Backend.BatchAddG1(ctx, s)
}

func (b *Batches) TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) ([]proofdata.G1Sums, []error) {
	b.once.Do(func() {
		for t0 := time.Now(); b.added.Load() < b.fill && time.Since(t0) < 30*time.Second; {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // the last of them reach the queue
	})
	b.mu.Lock()
	b.sizes = append(b.sizes, len(ss))
	b.mu.Unlock()
	return b.Backend.TailMSMG1Batch(ctx, ss)
}

// Sizes are the batches' sizes, in the order they ran.
func (b *Batches) Sizes() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.sizes...)
}

// ProveBatchedMix proves 8 generate jobs alternating between a dense
// mulchain and a sparse bits circuit (300 constraints each) through cfg
// with tail-msm batches of up to 4 on backend (counted: the first batch
// waits for 5 jobs to queue), and fails t unless every job is proved and
// gnark accepts every proof and some batch held 2 to 4 jobs. It returns the
// results and the batches' sizes.
func ProveBatchedMix(t testing.TB, cfg engine.CoreConfig, backend stages.Backend) ([]stream.Result, []int) {
	t.Helper()
	chain := Setup(t, "mulchain", 300)
	bits := Setup(t, "bits", 300)
	cfg.TailBatch = 4
	cfg.Shapes[stages.TailMSM] = stages.Shape{Workers: 1, Queue: 4}
	counted := NewBatches(backend, 5)
	cfg.Backend = counted
	var jobs []*stages.Job
	for i := range 8 {
		circuit := []string{"chain", "bits"}[i%2]
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Circuit: circuit, Generate: &stream.Generate{Seed: int64(i)}}})
	}
	res := Run(t, cfg, []*stages.Circuit{chain.Circuit(t, "chain"), bits.Circuit(t, "bits")}, jobs, 5*time.Minute)
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("job %s: %s", r.ID, r.Error)
		}
		vk := chain.VK
		if r.Circuit == "bits" {
			vk = bits.VK
		}
		if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
			t.Fatalf("job %s: gnark rejects the proof: %v", r.ID, err)
		}
	}
	sizes := counted.Sizes()
	t.Logf("tail-msm batches: %v", sizes)
	if slices.Max(sizes) < 2 || slices.Max(sizes) > 4 {
		t.Errorf("batches %v: want some of 2 to 4 jobs", sizes)
	}
	return res, sizes
}
