package gnarksrc_test

import (
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Options.SolveTasks (--solve-tasks) spreads each solve's levels over that
// many goroutines; whatever the count, the witness solves and the proofs
// verify with gnark.
func TestSolveTasksProve(t *testing.T) {
	keys := provertest.SetupOn(t, curve.BLS12_381, "porep", 8192)
	for _, tasks := range []int{1, 3} {
		c, err := gnarksrc.NewWith("porep", keys.CCS, keys.PK, keys.VK, &gnarksrc.Meta{Builtin: "porep", Constraints: keys.N},
			gnarksrc.Options{KeepProvingKey: true, SolveTasks: tasks})
		if err != nil {
			t.Fatal(err)
		}
		jobs := []*stages.Job{{Request: stream.Request{ID: "a", Generate: &stream.Generate{Seed: 1}}},
			{Request: stream.Request{ID: "b", Generate: &stream.Generate{Seed: 2}}}}
		res := provertest.Run(t, provertest.Config(t.TempDir(), 2, 2), []*stages.Circuit{c}, jobs, 5*time.Minute)
		if len(res) != len(jobs) {
			t.Fatalf("%d tasks: %d results for %d jobs", tasks, len(res), len(jobs))
		}
		for _, r := range res {
			if r.Error != "" {
				t.Fatalf("%d tasks: job %s: %s", tasks, r.ID, r.Error)
			}
			if err := verifyWithGnark(t, keys.VK, gnarksrc.HashDefault, r); err != nil {
				t.Fatalf("%d tasks: job %s: gnark rejects the proof: %v", tasks, r.ID, err)
			}
		}
	}
}
