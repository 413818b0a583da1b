package gpu

import (
	"context"
	"errors"
	"testing"
	"time"

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
	ctx := context.Background()
	c := NewCPU(5, 7)
	c.LimitHeavy(0) // 17 at once below
	heavy := func(fixed int) (int, func()) {
		t.Helper()
		n, done, err := c.heavy(ctx, fixed)
		if err != nil {
			t.Fatal(err)
		}
		return n, done
	}
	if n, done := heavy(c.MSMTasks); n != 5 {
		t.Fatalf("without a share: %d tasks, want MSMTasks 5", n)
	} else {
		done()
	}
	c.ShareCores(16)
	var dones []func()
	for i, want := range []int{16, 8, 5, 4, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1} {
		n, done := heavy(c.MSMTasks)
		if n != want {
			t.Fatalf("operation %d running at once: %d tasks, want %d", i+1, n, want)
		}
		dones = append(dones, done)
	}
	for _, done := range dones[1:] {
		done()
	}
	if n, done := heavy(c.FFTTasks); n != 8 {
		t.Fatalf("beside one running operation: %d tasks, want 8", n)
	} else {
		done()
	}
	dones[0]()
	if r := c.share.running.Load(); r != 0 {
		t.Fatalf("%d operations counted after all ended", r)
	}
}

// A CPU backend bounded to k heavy operations at once runs k: the next
// waits until one ends, or gives up with its context.
func TestHeavyOperationsWaitForASlot(t *testing.T) {
	const k = 2
	c := NewCPU(4, 4)
	c.LimitHeavy(k)
	ctx := context.Background()
	var dones []func()
	for i := range k {
		n, done, err := c.heavy(ctx, c.MSMTasks)
		if err != nil || n != 4 {
			t.Fatalf("operation %d of %d: %d tasks, %v; want 4 tasks at once", i+1, k, n, err)
		}
		dones = append(dones, done)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := c.heavy(cancelled, c.MSMTasks); !errors.Is(err, context.Canceled) {
		t.Fatalf("one more with every slot taken, context cancelled: %v, want context.Canceled", err)
	}
	got := make(chan error)
	go func() {
		_, done, err := c.heavy(ctx, c.MSMTasks)
		if err == nil {
			done()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("one more started with every slot taken (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	dones[0]()
	if err := <-got; err != nil {
		t.Fatalf("after one ended: %v", err)
	}
	for _, done := range dones[1:] {
		done()
	}
	if len(c.gate) != 0 {
		t.Fatalf("%d slots held after every operation ended", len(c.gate))
	}

	c.LimitHeavy(0)
	for i := range 3 * k {
		if _, _, err := c.heavy(cancelled, c.MSMTasks); err != nil {
			t.Fatalf("unbounded, operation %d: %v", i+1, err)
		}
	}
}

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
