package stages_test

import (
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
	cfg := provertest.Config(t.TempDir(), 2, 2)
	res, _ := provertest.ProveBatchedMix(t, cfg, cfg.Backend)
	for _, r := range res {
		if len(r.Stages) != len(stages.Names) {
			t.Errorf("job %s: %d stage timings, want %d", r.ID, len(r.Stages), len(stages.Names))
		}
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
