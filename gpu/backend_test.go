package gpu

import (
	"context"
	"testing"

	"github.com/zkpipe/zkpipe/proofdata"
)

// backend is what the conformance tests (backend_<curve>_test.go, one
// template for every curve) drive: every backend (CPU, CUDA) must pass
// them on each curve it proves.
type backend interface {
	Load(k *proofdata.Key) (proofdata.Resident, error)
	Transfer(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error)
	BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	BatchAddG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
	MSMG2(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error)
	Free(s *proofdata.Staged)
}

func TestShareCoresDividesTheCoresAmongRunningOperations(t *testing.T) {
	c := NewCPU(5, 7)
	if n, done := c.heavy(c.MSMTasks); n != 5 {
		t.Fatalf("without a share: %d tasks, want MSMTasks 5", n)
	} else {
		done()
	}
	c.ShareCores(16)
	var dones []func()
	for i, want := range []int{16, 8, 5, 4, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1} {
		n, done := c.heavy(c.MSMTasks)
		if n != want {
			t.Fatalf("operation %d running at once: %d tasks, want %d", i+1, n, want)
		}
		dones = append(dones, done)
	}
	for _, done := range dones[1:] {
		done()
	}
	if n, done := c.heavy(c.FFTTasks); n != 8 {
		t.Fatalf("beside one running operation: %d tasks, want 8", n)
	} else {
		done()
	}
	dones[0]()
	if r := c.share.running.Load(); r != 0 {
		t.Fatalf("%d operations counted after all ended", r)
	}
}

// A panic in one chunk of a parallel loop must reach the caller's goroutine
// (where the pipeline turns it into the job's error), not crash the process.
func TestAPanicInAChunkReachesTheCaller(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("the chunk's panic did not reach the caller")
		}
	}()
	parallel(100, 4, func(chunk, _, _ int) {
		if chunk == 2 {
			panic("chunk 2")
		}
	})
}
