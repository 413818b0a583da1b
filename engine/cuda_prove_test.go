package engine

import (
	"context"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// TestCUDAProveAndRun: Prove and Run on the CUDA backend, the library
// named by ZKPIPE_CUDA_LIB (on the H200, nvcc's; in CI, the host stand-in
// that runs the same drivers): four concurrent Proves beside a Run of
// four jobs, every proof accepted by gnark's verifier.
func TestCUDAProveAndRun(t *testing.T) {
	lib := os.Getenv("ZKPIPE_CUDA_LIB")
	if lib == "" {
		t.Skip("SKIPPED: ZKPIPE_CUDA_LIB names no CUDA library (scripts/test runs this over the host stand-in)")
	}
	c := loadChain(t)
	out := t.TempDir()
	e, err := New(context.Background(), Options{Device: "cuda", CUDA: CUDAOptions{Lib: lib, PinnedMiB: 16},
		Out: out, Log: io.Discard, Memory: MemoryOptions{Budget: "off"}}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	var wg sync.WaitGroup
	for seed := int64(1); seed <= 4; seed++ {
		wg.Go(func() {
			w := chainWitness(t, c, seed)
			proof, err := e.Prove(context.Background(), c.Name, w)
			if err != nil {
				t.Errorf("Prove seed %d on CUDA: %v", seed, err)
				return
			}
			verifyByGnark(t, c, proof, w)
		})
	}
	var mu sync.Mutex
	var results []stream.Result
	if err := e.Run(context.Background(), generated("r", 4), func(r stream.Result) error {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(results) != 4 {
		t.Fatalf("%d result lines, want 4", len(results))
	}
	for _, r := range results {
		if r.Error != "" {
			t.Errorf("job %s on CUDA: %s", r.ID, r.Error)
			continue
		}
		if err := gnarksrc.VerifyFiles(c.Source.(*gnarksrc.Source).VerifyingKey(), r.Proof, r.Public); err != nil {
			t.Errorf("job %s on CUDA: gnark rejects its files: %v", r.ID, err)
		}
	}
}

// TestCUDAStreamedBasesProve: a stream on the CUDA backend with the keys'
// bases in pinned host memory, streamed to the device in pieces of 64
// points for every proof (engine.CUDAOptions.Bases: a key larger than the
// card), classified straight into the pinned buffers on transfer: every
// proof is accepted by gnark's verifier.
func TestCUDAStreamedBasesProve(t *testing.T) {
	lib := os.Getenv("ZKPIPE_CUDA_LIB")
	if lib == "" {
		t.Skip("SKIPPED: ZKPIPE_CUDA_LIB names no CUDA library (scripts/test runs this over the host stand-in)")
	}
	c := loadChain(t)
	out := t.TempDir()
	e, err := New(context.Background(), Options{Device: "cuda",
		CUDA: CUDAOptions{Lib: lib, PinnedMiB: 16, Bases: gpu.BasesOnHost, StreamPiece: 64},
		Out:  out, Log: io.Discard, Memory: MemoryOptions{Budget: "off"}}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var results []stream.Result
	if err := e.Run(context.Background(), generated("s", 3), func(r stream.Result) error {
		results = append(results, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("%d result lines, want 3", len(results))
	}
	for _, r := range results {
		if r.Error != "" {
			t.Errorf("job %s, bases streamed: %s", r.ID, r.Error)
			continue
		}
		if err := gnarksrc.VerifyFiles(c.Source.(*gnarksrc.Source).VerifyingKey(), r.Proof, r.Public); err != nil {
			t.Errorf("job %s, bases streamed: gnark rejects its files: %v", r.ID, err)
		}
	}
}
