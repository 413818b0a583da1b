package gpu_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// The CUDA backend's pinned staging buffers (two a transfer lane) are
// allocated once, when it opens, and reported by PinnedBytes (what the
// engine charges to its pinned budget); a stream of proofs, on both B_G2
// devices, allocates no more, and Close frees them all. Counted by the
// stand-in's zk_host_alloc.
func TestCUDAPinnedAllocatedOnceAtOpen(t *testing.T) {
	path := os.Getenv("ZKPIPE_CUDA_LIB")
	if path == "" {
		t.Skip("SKIPPED: ZKPIPE_CUDA_LIB names no CUDA library")
	}
	const lanes, pin = 3, 1 << 20
	h := openCUDA(t).HostStandIn() // the shared backend's: not closed here
	if h == nil {
		t.Skip("needs the host stand-in (gpu/cuda/hostlib.cpp)")
	}
	allocs0, live0 := h.Pinned(0), h.Pinned(1)
	c, err := gpu.OpenCUDA(path, gpu.WithTransferLanes(lanes), gpu.WithPinnedBytes(pin), gpu.WithMSMTables(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Pinned(0) - allocs0; got != 2*lanes {
		t.Errorf("open made %d pinned allocations, want %d (two a lane)", got, 2*lanes)
	}
	if got := h.Pinned(1) - live0; got != 2*lanes*pin || c.PinnedBytes() != int(got) {
		t.Errorf("open pinned %d bytes, PinnedBytes says %d, want %d", got, c.PinnedBytes(), 2*lanes*pin)
	}
	keys := provertest.Setup(t, "bits", 300)
	for _, g2 := range []string{"cuda", "cpu"} {
		cfg := provertest.Config(t.TempDir(), 2, 2)
		cfg.Backend = c
		if g2 == "cuda" {
			cfg.G2 = c
		}
		var jobs []*stages.Job
		for i := range 6 {
			jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
		}
		for _, r := range provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, "bits")}, jobs, 2*time.Minute) {
			if r.Error != "" {
				t.Fatalf("bg2=%s: job %s: %s", g2, r.ID, r.Error)
			}
			if err := verify(keys.VK, r); err != nil {
				t.Fatalf("bg2=%s: job %s: gnark rejects the proof: %v", g2, r.ID, err)
			}
		}
	}
	if got := h.Pinned(0) - allocs0; got != 2*lanes {
		t.Errorf("after 12 proofs, %d pinned allocations since open, want the %d of open", got, 2*lanes)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := h.Pinned(1); got != live0 {
		t.Errorf("after Close %d pinned bytes live, want %d as before open", got, live0)
	}
}
