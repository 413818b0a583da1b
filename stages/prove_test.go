package stages_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// verify checks a result's files with gnark's own verifier.
func verify(t *testing.T, vk groth16.VerifyingKey, r stream.Result) error {
	t.Helper()
	proof := groth16.NewProof(ecc.BN254)
	f, err := os.Open(r.Proof)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := proof.ReadFrom(f); err != nil {
		return err
	}
	data, err := os.ReadFile(r.Public)
	if err != nil {
		return err
	}
	pub, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		return err
	}
	if err := pub.UnmarshalBinary(data); err != nil {
		return err
	}
	return groth16.Verify(proof, vk, pub)
}

func TestEveryBuiltinProvesAtConcurrencyOneAndMore(t *testing.T) {
	for _, name := range []string{"mulchain", "bits", "commit"} {
		keys := provertest.Setup(t, name, 300)
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(t *testing.T) {
				dir := t.TempDir()
				var jobs []*stages.Job
				for i := range 4 {
					jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
				}
				res := provertest.Run(t, provertest.Config(dir, workers, 2), []*stages.Circuit{keys.Circuit(t, name)}, jobs, 5*time.Minute)
				if len(res) != len(jobs) {
					t.Fatalf("%d results for %d jobs", len(res), len(jobs))
				}
				for _, r := range res {
					if r.Error != "" {
						t.Fatalf("job %s: %s", r.ID, r.Error)
					}
					if err := verify(t, keys.VK, r); err != nil {
						t.Fatalf("job %s: gnark rejects the proof: %v", r.ID, err)
					}
					if len(r.Stages) != len(stages.Names) {
						t.Errorf("job %s: %d stage timings, want %d", r.ID, len(r.Stages), len(stages.Names))
					}
				}
			})
		}
	}
}
