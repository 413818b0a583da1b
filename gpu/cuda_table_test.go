package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// TestCUDATablesMatchCPU runs every MSM over precomputed tables (a table for
// every base set, however small) against the CPU backend: G1 and G2, both H
// conventions, scalar populations from all zeros to all r − 1.
func TestCUDATablesMatchCPU(t *testing.T) {
	c := openOwn(t, gpu.WithMSMTableMinBases(1))
	defer c.Close()
	r := rand.New(rand.NewPCG(13, 14))
	sizes := []int{1, 2, 3, 100, 1000, 4097}
	if testing.Short() {
		sizes = sizes[:4]
	}
	for _, size := range sizes {
		for _, mode := range []int{mixed, zeros, ones, dense, repeat, small} {
			t.Run(fmt.Sprintf("n=%d/mode=%d", size, mode), func(t *testing.T) {
				f := newFixture(r, size, mode, proofdata.HDivideByZ, true)
				if got, bases := c.ResidentBytes(f.key), c.ResidentBytes(f.key); got != bases || got <= 0 {
					t.Fatalf("ResidentBytes %d then %d", got, bases)
				}
				compare(t, c, f, true)
			})
		}
	}
	t.Run("odd coset", func(t *testing.T) { compare(t, c, newFixture(r, 100, mixed, proofdata.HOddCoset, true), true) })
}

// TestCUDATablesCountedAndOptional: a key's tables are counted in
// ResidentBytes (about nw times its bases), and a table budget of 0 or one
// too small for the key leaves the MSMs on the bases.
func TestCUDATablesCountedAndOptional(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	f := newFixture(r, 100, mixed, proofdata.HDivideByZ, true)
	off := openOwn(t, gpu.WithMSMTables(0), gpu.WithMSMTableMinBases(1))
	defer off.Close()
	on := openOwn(t, gpu.WithMSMTableMinBases(1))
	defer on.Close()
	small := openOwn(t, gpu.WithMSMTables(1<<10), gpu.WithMSMTableMinBases(1))
	defer small.Close()
	base, with, tiny := off.ResidentBytes(f.key), on.ResidentBytes(f.key), small.ResidentBytes(f.key)
	if with < 10*base/2 || tiny != base {
		t.Fatalf("ResidentBytes: %d without tables, %d with, %d under a 1 KiB budget", base, with, tiny)
	}
	for _, c := range []*gpu.CUDA{off, small} {
		compare(t, c, f, true)
	}
}

// TestCUDATableFailuresFreeEverything fails each allocation and kernel of a
// Load that builds tables, in turn: every failure is reported with the
// library's message and leaves no device memory behind, and the five
// tables' allocations and kernels are among the points failed.
func TestCUDATableFailuresFreeEverything(t *testing.T) {
	f := newFixture(rand.New(rand.NewPCG(17, 18)), 3, mixed, proofdata.HDivideByZ, true)
	points := func(c *gpu.CUDA, what string) int {
		h := standIn(t, c)
		base := h.Live()
		failed := 0
		for nth := int64(1); ; nth++ {
			if h.Fail(what, nth) != 0 {
				t.Fatalf("zk_host_fail(%s) refused", what)
			}
			res, err := c.Load(f.key)
			h.Fail(what, 0)
			if err == nil {
				perr := prove(context.Background(), c, res, f)
				if cerr := res.Close(); cerr != nil || perr != nil {
					t.Fatalf("after %d %s failures: prove %v, close %v", failed, what, perr, cerr)
				}
			}
			if live := h.Live(); live != base {
				t.Fatalf("%s #%d failed (%v): %d device allocations left, want %d", what, nth, err, live, base)
			}
			if err == nil {
				return failed
			}
			if !strings.Contains(err.Error(), what+": injected failure") {
				t.Fatalf("%s #%d: error %q does not carry the library's message", what, nth, err)
			}
			failed++
		}
	}
	on := openOwn(t, gpu.WithMSMTableMinBases(1))
	defer on.Close()
	off := openOwn(t, gpu.WithMSMTables(0))
	defer off.Close()
	for _, what := range []string{"cudaMalloc", "kernel"} {
		with, without := points(on, what), points(off, what)
		if with < without+5 {
			t.Errorf("%s: %d failure points in a Load with tables, %d without: want the 5 tables' too", what, with, without)
		}
	}
}
