package gnarksrc_test

import (
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// porep proves in the engine on both curves, its witnesses made in the
// stream from seeds (its public roots computed natively, every other wire
// by the solver, its hints among them), and gnark's groth16.Verify accepts
// each proof, for two challenges (a replicated system) on BN254 and one
// on BLS12-381 (TestBLS12381BuiltinsProve proves its smallest there too).
func TestPorepProvesInTheEngine(t *testing.T) {
	b, err := circuits.Lookup("porep")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id curve.ID
		n  int
	}{{curve.BN254, 4096}, {curve.BLS12_381, b.Min()}} {
		keys := provertest.SetupOn(t, c.id, "porep", c.n)
		circ := keys.Circuit(t, "porep")
		var jobs []*stages.Job
		for seed := range int64(3) {
			jobs = append(jobs, &stages.Job{Request: stream.Request{ID: string(rune('a' + seed)), Generate: &stream.Generate{Seed: seed}}})
		}
		res := provertest.Run(t, provertest.Config(t.TempDir(), 2, 2), []*stages.Circuit{circ}, jobs, 5*time.Minute)
		if len(res) != len(jobs) {
			t.Fatalf("%s: %d results for %d jobs", c.id, len(res), len(jobs))
		}
		for _, r := range res {
			if r.Error != "" {
				t.Fatalf("%s: job %s: %s", c.id, r.ID, r.Error)
			}
			if err := verifyWithGnark(t, keys.VK, gnarksrc.HashDefault, r); err != nil {
				t.Fatalf("%s: job %s: gnark's groth16.Verify rejects the proof: %v", c.id, r.ID, err)
			}
		}
	}
}
