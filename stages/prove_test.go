package stages_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// verify checks a result's files with gnark's own verifier.
func verify(t *testing.T, vk groth16.VerifyingKey, r stream.Result) error {
	t.Helper()
	return gnarksrc.VerifyFiles(vk, r.Proof, r.Public)
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

// With the cores shared among the MSMs and NTTs running at once, three
// workers a stage give each of them fewer tasks than the backend's own
// counts: every proof must still verify.
func TestProofsVerifyWithCoresShared(t *testing.T) {
	for _, name := range []string{"mulchain", "bits", "commit"} {
		t.Run(name, func(t *testing.T) {
			cpu := gpu.NewCPU(0, 0)
			cpu.ShareCores(4)
			proveSixAndVerify(t, provertest.Setup(t, name, 300), name, cpu)
		})
	}
}

// With one CPU MSM or NTT at a time (gpu.CPU.LimitHeavy) and three workers
// a stage, the stages' MSMs queue for the one slot: on both curves every
// proof must still come out, and verify.
func TestProofsVerifyWithOneHeavyOperationAtATime(t *testing.T) {
	for _, id := range []curve.ID{curve.BN254, curve.BLS12_381} {
		for _, name := range []string{"mulchain", "commit"} {
			t.Run(fmt.Sprintf("%s/%s", id, name), func(t *testing.T) {
				cpu := gpu.NewCPU(0, 0)
				cpu.LimitHeavy(1)
				proveSixAndVerify(t, provertest.SetupOn(t, id, name, 300), name, cpu)
			})
		}
	}
}

// proveSixAndVerify proves six generated witnesses of the circuit on cpu,
// three workers a stage, and checks each proof with gnark's verifier.
func proveSixAndVerify(t *testing.T, keys *provertest.Keys, name string, cpu *gpu.CPU) {
	t.Helper()
	cfg := provertest.Config(t.TempDir(), 3, 2)
	cfg.Backend, cfg.G2 = cpu, cpu
	var jobs []*stages.Job
	for i := range 6 {
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
	}
	res := provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, name)}, jobs, 5*time.Minute)
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
	}
}

// gnark's verifier must reject a tampered proof, a wrong public input and a
// proof checked against another circuit's verifying key.
func TestGnarkRejectsTamperedProofsWrongInputsAndWrongKeys(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	other := provertest.Setup(t, "bits", 300)
	dir := t.TempDir()
	res := provertest.Run(t, provertest.Config(dir, 1, 1), []*stages.Circuit{keys.Circuit(t, "chain")},
		[]*stages.Job{{Request: stream.Request{ID: "p", Generate: &stream.Generate{Seed: 9}}}}, time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("results %+v", res)
	}
	r := res[0]
	if err := verify(t, keys.VK, r); err != nil {
		t.Fatalf("the untouched proof is rejected: %v", err)
	}

	proof := groth16.NewProof(ecc.BN254)
	f, _ := os.Open(r.Proof)
	if _, err := proof.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, _ := os.ReadFile(r.Public)
	pub, _ := witness.New(ecc.BN254.ScalarField())
	if err := pub.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}

	// tampered: C ← C + A
	p := proof.(*groth16bn254.Proof)
	tampered := *p
	tampered.Krs.Add(&tampered.Krs, &tampered.Ar)
	if err := groth16.Verify(&tampered, keys.VK, pub); err == nil {
		t.Error("gnark accepted a tampered proof")
	}
	// wrong public input: Y + 1
	vec := pub.Vector().(fr.Vector)
	vec[0].Add(&vec[0], new(fr.Element).SetOne())
	if err := groth16.Verify(proof, keys.VK, pub); err == nil {
		t.Error("gnark accepted a wrong public input")
	}
	vec[0].Sub(&vec[0], new(fr.Element).SetOne())
	if err := groth16.Verify(proof, keys.VK, pub); err != nil {
		t.Fatalf("restored public input rejected: %v", err)
	}
	// wrong verifying key
	if err := groth16.Verify(proof, other.VK, pub); err == nil {
		t.Error("gnark accepted the proof under another circuit's key")
	}
}

// failingOutput fails every write of one job, as a full disk would.
type failingOutput struct {
	blob.Dir
	failID string
}

func (o failingOutput) Write(name string, data []byte) (string, error) {
	if strings.HasPrefix(name, o.failID+".") {
		return "", fmt.Errorf("write %s: %w", name, syscall.ENOSPC)
	}
	return o.Dir.Write(name, data)
}

func TestAFullDiskFailsOnlyThatJob(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	dir := t.TempDir()
	cfg := provertest.Config(dir, 2, 1)
	cfg.Out = failingOutput{Dir: blob.Dir(dir), failID: "j1"}
	var jobs []*stages.Job
	for i := range 3 {
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
	}
	res := provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, "chain")}, jobs, time.Minute)
	for _, r := range res {
		if r.ID == "j1" {
			if !strings.Contains(r.Error, "no space left on device") || !strings.Contains(r.Error, "job j1: assemble") {
				t.Errorf("j1: error %q", r.Error)
			}
			if _, err := os.Stat(filepath.Join(dir, "j1.proof")); err == nil {
				t.Error("j1 left a proof file")
			}
			continue
		}
		if r.Error != "" {
			t.Fatalf("%s: %s", r.ID, r.Error)
		}
		if err := verify(t, keys.VK, r); err != nil {
			t.Errorf("%s: %v", r.ID, err)
		}
	}
}

// A circuit whose queries exceed two parts of proofdata.MinClassifyPart
// has them classified by several goroutines (Steps.classify, on the CPU
// backend): its proofs verify. bits is the case that compacts (its queries
// are mostly zeros and ones); the dense one moves nothing
// (proofdata.TestClassifyWithMatchesClassify).
func TestQueriesClassifiedInPartsProveAndVerify(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // 4 parts a query whatever the host
	for _, name := range []string{"bits"} {
		t.Run(name, func(t *testing.T) {
			keys := provertest.Setup(t, name, 3*proofdata.MinClassifyPart+77)
			var jobs []*stages.Job
			for i := range 2 {
				jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("p%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
			}
			res := provertest.Run(t, provertest.Config(t.TempDir(), 1, 2), []*stages.Circuit{keys.Circuit(t, name)}, jobs, 5*time.Minute)
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
			}
		})
	}
}
