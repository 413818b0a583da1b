package gnarksrc_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// TestLoadedKeyProves: a circuit with a BSB22 commitment, set up on each
// curve (its key raw, as Setup writes it) and loaded with LoadDir (the
// key read by readProvingKey, over all cores), proves, and gnark's
// groth16.Verify accepts the proof with the directory's verifying key.
func TestLoadedKeyProves(t *testing.T) {
	for _, id := range curve.All {
		t.Run(id.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			if _, err := gnarksrc.SetupOn(id, "commit", 1<<10, dir); err != nil {
				t.Fatal(err)
			}
			c, err := gnarksrc.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			jobs := []*stages.Job{{Request: stream.Request{ID: "p", Generate: &stream.Generate{Seed: 5}}}}
			res := provertest.Run(t, provertest.Config(t.TempDir(), 1, 1), []*stages.Circuit{c}, jobs, 2*time.Minute)
			if len(res) != 1 || res[0].Error != "" {
				t.Fatalf("prove: %+v", res)
			}
			vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := gnarksrc.VerifyFiles(vk, res[0].Proof, res[0].Public); err != nil {
				t.Fatalf("gnark rejects the proof: %v", err)
			}
		})
	}
}
