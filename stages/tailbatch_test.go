package stages_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// A stream with tail-msm batches of up to 4, over two circuits (dense
// mulchain, sparse bits): every proof verifies with gnark, every job keeps
// its own stage timings, and the stage did run batches of more than one.
func TestTailMSMBatchesProveEveryJob(t *testing.T) {
	chain := provertest.Setup(t, "mulchain", 300)
	bits := provertest.Setup(t, "bits", 300)
	dir := t.TempDir()
	cfg := provertest.Config(dir, 2, 2)
	cfg.TailBatch = 4
	cfg.Shapes[stages.TailMSM] = stages.Shape{Workers: 1, Queue: 4}
	counted := provertest.NewBatches(cfg.Backend, 5)
	cfg.Backend = counted
	var jobs []*stages.Job
	for i := range 8 {
		circuit := []string{"chain", "bits"}[i%2]
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Circuit: circuit, Generate: &stream.Generate{Seed: int64(i)}}})
	}
	res := provertest.Run(t, cfg, []*stages.Circuit{chain.Circuit(t, "chain"), bits.Circuit(t, "bits")}, jobs, 5*time.Minute)
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
		if err := verify(t, vk, r); err != nil {
			t.Fatalf("job %s: gnark rejects the proof: %v", r.ID, err)
		}
		if len(r.Stages) != len(stages.Names) {
			t.Errorf("job %s: %d stage timings, want %d", r.ID, len(r.Stages), len(stages.Names))
		}
	}
	sizes := counted.Sizes()
	t.Logf("tail-msm batches: %v", sizes)
	if slices.Max(sizes) < 2 || slices.Max(sizes) > 4 {
		t.Errorf("batches %v: want some of 2 to 4 jobs", sizes)
	}
}

// A lone job in a stream with tail-msm batches of 8 is proved, as a batch
// of one (pipeline's TestABatchNeverWaitsForMoreJobs checks, with an input
// that stays open, that a batch never waits for jobs that are not there).
func TestTailMSMBatchOfOneJobFinishes(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	cfg := provertest.Config(t.TempDir(), 1, 8)
	cfg.TailBatch = 8
	res := provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, "chain")},
		[]*stages.Job{{Request: stream.Request{ID: "alone", Generate: &stream.Generate{Seed: 3}}}}, time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("results %+v", res)
	}
	if err := verify(t, keys.VK, res[0]); err != nil {
		t.Fatalf("gnark rejects the proof: %v", err)
	}
}
