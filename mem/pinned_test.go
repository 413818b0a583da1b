package mem

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakePinned stands in for cudaHostAlloc/cudaFreeHost.
type fakePinned struct {
	mu      sync.Mutex
	live    int
	allocs  int
	failAt  int // the allocation that fails (1-based); 0: none
	handout [][]byte
}

func (f *fakePinned) alloc(n int) ([]byte, func() error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocs++
	if f.allocs == f.failAt {
		return nil, nil, errors.New("cudaErrorMemoryAllocation")
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xAA // what touch must overwrite, a byte a page
	}
	f.live++
	f.handout = append(f.handout, b)
	return b, func() error { f.mu.Lock(); f.live--; f.mu.Unlock(); return nil }, nil
}

func TestPinnedPoolAllocatesAndTouchesOnce(t *testing.T) {
	g := newTestGovernor(1<<20, nil) // pinned budget 512 KiB
	f := &fakePinned{}
	p, err := NewPinnedPool(g, f.alloc, 64<<10, 3)
	if err != nil {
		t.Fatal(err)
	}
	if f.allocs != 3 || p.Slots() != 3 || p.Slot() != 64<<10 {
		t.Fatalf("%d allocations, pool of %d × %d", f.allocs, p.Slots(), p.Slot())
	}
	for _, b := range f.handout {
		for i := 0; i < len(b); i += int(pageSize) {
			if b[i] != 0 {
				t.Fatalf("page at %d not touched", i)
			}
		}
	}
	if s := g.Stats(); s.Pinned != 3*64<<10 || s.Charged != 3*64<<10 {
		t.Fatalf("stats %+v", s)
	}

	ctx := context.Background()
	var bufs [][]byte
	for range 3 {
		b, err := p.Get(ctx)
		if err != nil || len(b) != 64<<10 {
			t.Fatalf("get: %d bytes, %v", len(b), err)
		}
		bufs = append(bufs, b)
	}
	// all lent: the next Get waits, and gives up with its context
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := p.Get(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("get from an empty pool: %v", err)
	}
	got := make(chan []byte)
	go func() { b, _ := p.Get(ctx); got <- b }()
	p.Put(bufs[0])
	select {
	case b := <-got:
		p.Put(b)
	case <-time.After(5 * time.Second):
		t.Fatal("Put did not wake a waiting Get")
	}
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), "2 of 3") {
		t.Fatalf("close with two lent: %v", err)
	}
	if f.live != 3 {
		t.Fatal("close freed buffers still lent")
	}

	// a fresh pool closed properly frees everything and gives the charge back
	q, err := NewPinnedPool(nil, f.alloc, 4096, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil || f.live != 3 {
		t.Fatalf("close: %v, %d live", err, f.live)
	}
}

func TestPinnedPoolRefusals(t *testing.T) {
	g := newTestGovernor(1<<20, nil) // pinned budget 512 KiB
	f := &fakePinned{}
	if _, err := NewPinnedPool(g, f.alloc, 256<<10, 3); err == nil || !strings.Contains(err.Error(), "512 KiB pinned budget") {
		t.Fatalf("over budget: %v", err)
	}
	if f.allocs != 0 {
		t.Fatal("allocated before checking the budget")
	}
	f.failAt = 2
	if _, err := NewPinnedPool(g, f.alloc, 64<<10, 3); err == nil || !strings.Contains(err.Error(), "buffer 2 of 3") {
		t.Fatalf("failed allocation: %v", err)
	}
	if f.live != 0 {
		t.Fatalf("%d buffers left after a failed start", f.live)
	}
	if s := g.Stats(); s.Pinned != 0 || s.Charged != 0 {
		t.Fatalf("charge kept after a failed start: %+v", s)
	}
}
