package engine

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	groth16bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// blsCircuit sets up a built-in on BLS12-381 in a temporary directory and
// loads it.
func blsCircuit(t *testing.T, builtin, name string) *stages.Circuit {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if _, err := gnarksrc.SetupOn(curve.BLS12_381, builtin, 256, dir); err != nil {
		t.Fatal(err)
	}
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// One engine on the CPU proves circuits of both curves: Prove returns each
// circuit's curve's gnark proof, which gnark's verifier accepts, and a Run
// of generate jobs for both circuits beside it proves every job.
func TestProveBothCurvesOnOneEngine(t *testing.T) {
	proveBothCurves(t, cpuOptions(t.TempDir()))
}

// The same on the CUDA backend (over the host stand-in in scripts/test):
// its BLS12-381 kernels beside BN254's in one engine, one stream.
func TestCUDAProvesBothCurvesOnOneEngine(t *testing.T) {
	lib := os.Getenv("ZKPIPE_CUDA_LIB")
	if lib == "" {
		t.Skip("SKIPPED: ZKPIPE_CUDA_LIB names no CUDA library (scripts/test runs this over the host stand-in)")
	}
	proveBothCurves(t, Options{Device: "cuda", CUDA: CUDAOptions{Lib: lib, PinnedMiB: 16},
		Out: t.TempDir(), Log: io.Discard, Memory: MemoryOptions{Budget: "off"}})
}

func proveBothCurves(t *testing.T, opts Options) {
	bn := loadChain(t)
	bls := blsCircuit(t, "commit", "blscommit")
	e, err := New(context.Background(), opts, bn, bls)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var wg sync.WaitGroup
	for _, c := range []*stages.Circuit{bn, bls} {
		wg.Go(func() {
			w := chainWitness(t, c, 3)
			proof, err := e.Prove(context.Background(), c.Name, w)
			if err != nil {
				t.Errorf("Prove %s: %v", c.Name, err)
				return
			}
			_, isBN := proof.(*groth16bn254.Proof)
			_, isBLS := proof.(*groth16bls12381.Proof)
			if c.Curve() == curve.BN254 && !isBN || c.Curve() == curve.BLS12_381 && !isBLS {
				t.Errorf("Prove %s (%s) returned a %T", c.Name, c.Curve(), proof)
			}
			verifyByGnark(t, c, proof, w)
		})
	}
	jobs := make(chan stream.Line, 4)
	for i, name := range []string{bn.Name, bls.Name, bn.Name, bls.Name} {
		jobs <- stream.Line{Number: i + 1, Request: stream.Request{ID: name + string(rune('a'+i)), Circuit: name, Generate: &stream.Generate{Seed: int64(i + 1)}}}
	}
	close(jobs)
	var results []stream.Result
	var mu sync.Mutex
	if err := e.Run(context.Background(), jobs, func(r stream.Result) error {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(results) != 4 {
		t.Fatalf("%d results, want 4", len(results))
	}
	for _, r := range results {
		c := bn
		if r.Circuit == bls.Name {
			c = bls
		}
		if r.Error != "" {
			t.Errorf("job %s: %s", r.ID, r.Error)
		} else if err := gnarksrc.VerifyFiles(c.Source.(*gnarksrc.Source).VerifyingKey(), r.Proof, r.Public); err != nil {
			t.Errorf("job %s (%s): %v", r.ID, c.Curve(), err)
		}
	}
}
