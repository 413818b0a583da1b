package gpu_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// TestCUDAConfigReachesTheLibrary: each backend's CUDAConfig is the one
// its library context holds (zk_init's zk_config), two backends of one
// process keep their own, and the zero value is the library's defaults.
func TestCUDAConfigReachesTheLibrary(t *testing.T) {
	def := openOwn(t)
	defer def.Close()
	standIn(t, def)
	tuned := gpu.CUDAConfig{MSMWindow: 22, MSMChunk: 8, MSMSegment: 16, Spin: true, WaitPollMicros: -1, MSMPieceLog: 12}
	c := openOwn(t, gpu.WithConfig(tuned))
	defer c.Close()
	got, ok := c.LibraryConfig()
	if !ok || got != tuned {
		t.Errorf("library holds %+v (ok %v), want %+v", got, ok, tuned)
	}
	if got, ok := def.LibraryConfig(); !ok || got != (gpu.CUDAConfig{}) {
		t.Errorf("a second backend changed the first's config: %+v (ok %v), want the defaults", got, ok)
	}
	if c.Config() != tuned || !strings.Contains(c.Device(), "spin-wait") || strings.Contains(def.Device(), "spin") {
		t.Errorf("Config %+v, devices %q and %q: want the tuned one to spin alone", c.Config(), c.Device(), def.Device())
	}
	// the window reaches the MSM plans: 2^21 buckets a set take more
	// scratch than 100 points' own window
	k := newFixture(rand.New(rand.NewPCG(1, 2)), 100, mixed, proofdata.HDivideByZ, false).key
	if c.JobBytes(k, 0) <= def.JobBytes(k, 0) {
		t.Errorf("JobBytes %d with 22-bit windows, %d by size: the window did not reach the plan", c.JobBytes(k, 0), def.JobBytes(k, 0))
	}
}

// TestCUDAConfigOutOfRange: a field out of range is refused by OpenCUDA,
// naming the field and its range, before the library is touched.
func TestCUDAConfigOutOfRange(t *testing.T) {
	for _, c := range []struct {
		cfg   gpu.CUDAConfig
		field string
	}{
		{gpu.CUDAConfig{MSMWindow: 3}, "MSMWindow 3"},
		{gpu.CUDAConfig{MSMWindow: gpu.MaxMSMWindow + 1}, fmt.Sprintf("MSMWindow %d", gpu.MaxMSMWindow+1)},
		{gpu.CUDAConfig{MSMChunk: 1}, "MSMChunk 1"},
		{gpu.CUDAConfig{MSMChunk: 300}, "MSMChunk 300"},
		{gpu.CUDAConfig{MSMSegment: 12}, "MSMSegment 12"},
		{gpu.CUDAConfig{MSMSegment: 512}, "MSMSegment 512"},
		{gpu.CUDAConfig{WaitPollMicros: -2}, "WaitPollMicros -2"},
		{gpu.CUDAConfig{WaitPollMicros: 1001}, "WaitPollMicros 1001"},
		{gpu.CUDAConfig{MSMPieceLog: 9}, "MSMPieceLog 9"},
		{gpu.CUDAConfig{MSMPieceLog: 31}, "MSMPieceLog 31"},
	} {
		dev, err := gpu.OpenCUDA(cudaLib(t), gpu.WithConfig(c.cfg))
		if err == nil {
			dev.Close()
			t.Errorf("%+v: opened", c.cfg)
			continue
		}
		if !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), "want") {
			t.Errorf("%+v: %v: does not name %q and its range", c.cfg, err, c.field)
		}
	}
}

// TestCUDAWideWindowMatchesCPU: 22-bit windows (2^21 buckets a set, the
// segment and reduce steps' widest case, two-pass reductions) over the
// tables give the CPU's sums (over the bases the stand-in takes minutes).
// Before ABI 9, scripts/test ran TestCUDATablesMatchCPU/n=100/mode=[03]
// with ZKPIPE_MSM_WINDOW=22; the -run CUDA line of ./gpu runs this.
func TestCUDAWideWindowMatchesCPU(t *testing.T) {
	wide := gpu.WithConfig(gpu.CUDAConfig{MSMWindow: 22})
	c := openOwn(t, gpu.WithMSMTableMinBases(1), wide)
	defer c.Close()
	r := rand.New(rand.NewPCG(13, 14))
	for _, mode := range []int{mixed, dense} {
		t.Run(fmt.Sprintf("tables/mode=%d", mode), func(t *testing.T) {
			compare(t, c, newFixture(r, 100, mode, proofdata.HDivideByZ, true), true)
		})
	}
}
