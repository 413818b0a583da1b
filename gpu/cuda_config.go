package gpu

import (
	"fmt"
	"unsafe"
)

// CUDAConfig is the CUDA backend's tuning: the library's knobs, which
// OpenCUDA gives to the device it opens (zk_config at zk_init,
// gpu/cuda/zkpipe.h, as ICICLE's MSMConfig), and how the backend loads the
// library. Each backend has its own: two in one process, or two GPUs, may
// differ. The zero value is the defaults, those that the H200 measurements
// chose (notes/cuda.md); the fields are for measuring alternatives without
// a rebuild (bench/h200-session.sh). The zkpipe command fills it from
// ZKPIPE_MSM_WINDOW, ZKPIPE_MSM_CHUNK, ZKPIPE_MSM_SEGMENT,
// ZKPIPE_CUDA_SPIN, ZKPIPE_CUDA_WAIT_POLL_US, ZKPIPE_CUDA_TAIL_SPLIT and LD_LIBRARY_PATH
// (commands/cudaenv.go); this package reads no environment.
type CUDAConfig struct {
	// MSMWindow is the window of every MSM and of every MSM table's layout,
	// in bits, 4 to MaxMSMWindow; 0 chooses by size and group (16 bits from
	// 2^20 points; a table of 2^22 bases or more, 20, and BLS12-381's G1
	// 22 from 2^24).
	MSMWindow int
	// MSMChunk is how many points a GPU thread sums per level of a bucket's
	// sum, 2 to 256; 0 chooses by group (32; BLS12-381's G1 64, its G2 128).
	MSMChunk int
	// MSMSegment is how many buckets a GPU thread reduces, a power of two
	// from 2 to 256: fewer means more threads for the segment kernel, more
	// means fewer segment sums to combine; 0 chooses by group and size (8,
	// BLS12-381's G2 4, widened past 2^18 buckets).
	MSMSegment int
	// Spin has host threads spin while they wait for the GPU, CUDA's own
	// default, instead of sleeping until it signals. Spinning burned about
	// a core per GPU stage worker on the H200 (notes/stream.md); sleeping
	// costs microseconds a wait. CUDA keeps this flag per device for the
	// whole process: the backend opened last on a GPU sets it for all.
	Spin bool
	// WaitPollMicros: without Spin, an MSM's host thread sleeps through
	// the MSM's first level of bucket sums (most of its time), then looks
	// every WaitPollMicros µs (1 to 1000) whether the rest is done,
	// sleeping in between; 0 is 20 µs. -1 sleeps until CUDA wakes it
	// throughout (blocking sync), whose wake-ups cost 0.2–0.8 ms a G1 MSM
	// on one H100 machine (notes/h100-2026-12-06g.md).
	WaitPollMicros int
	// MSMPieceLog bounds one MSM run: an MSM of more than 2^MSMPieceLog
	// scalars runs in pieces of that many, their window sums added, so that
	// its device scratch stays that of 2^MSMPieceLog scalars whatever its
	// size (10 to 30; 0 is 24: about 6 GiB, where a 2^27 MSM in one run
	// held 48 GiB).
	MSMPieceLog int
	// SerialTails runs one job's tail MSMs (A, B₁, K) one after another
	// instead of on several compute streams at once (for A/B measurements;
	// WithTailSplit says the same).
	SerialTails bool
	// LibraryPath is the dynamic loader's search path, LD_LIBRARY_PATH as
	// the process was started with: the library's own dependencies are
	// looked for in its absolute elements first (FindCUDALibrary explains
	// why). It counts at the first load of a library: a process loads each
	// library once.
	LibraryPath string
}

// MinMSMPieceLog and MaxMSMPieceLog bound CUDAConfig.MSMPieceLog
// (gpu/cuda/driver.cuh, MSM_PIECE_LOG_MIN and _MAX).
const (
	MinMSMPieceLog = 10
	MaxMSMPieceLog = 30
)

// MaxMSMWindow is the widest window CUDAConfig.MSMWindow takes: 2^23
// buckets a set (gpu/cuda/msm.cuh, MSM_MAX_WINDOW).
const MaxMSMWindow = 24

// WithConfig sets the backend's CUDAConfig (default: its zero value).
func WithConfig(cfg CUDAConfig) CUDAOption {
	return func(c *cudaConfig) {
		c.lib = cfg
		c.tailSplit = !cfg.SerialTails
	}
}

// check names the first field out of range.
func (c CUDAConfig) check() error {
	if c.MSMWindow != 0 && (c.MSMWindow < 4 || c.MSMWindow > MaxMSMWindow) {
		return fmt.Errorf("cuda config: MSMWindow %d: want 4 to %d bits, or 0 (by size)", c.MSMWindow, MaxMSMWindow)
	}
	if c.MSMChunk != 0 && (c.MSMChunk < 2 || c.MSMChunk > 256) {
		return fmt.Errorf("cuda config: MSMChunk %d: want 2 to 256 points, or 0 (by group)", c.MSMChunk)
	}
	if s := c.MSMSegment; s != 0 && (s < 2 || s > 256 || s&(s-1) != 0) {
		return fmt.Errorf("cuda config: MSMSegment %d: want a power of two from 2 to 256, or 0 (by size)", s)
	}
	if p := c.WaitPollMicros; p != 0 && p != -1 && (p < 1 || p > 1000) {
		return fmt.Errorf("cuda config: WaitPollMicros %d: want 1 to 1000 µs, 0 (20) or -1 (blocking sync)", p)
	}
	if p := c.MSMPieceLog; p != 0 && (p < MinMSMPieceLog || p > MaxMSMPieceLog) {
		return fmt.Errorf("cuda config: MSMPieceLog %d: want %d to %d, or 0 (24)", p, MinMSMPieceLog, MaxMSMPieceLog)
	}
	return nil
}

// zk is c as zk_init takes it, over the library's defaults (zk_default_config).
func (c CUDAConfig) zk(f *cudaFns) zkConfig {
	var z zkConfig
	f.defaultConfig(&z)
	z.ConfigBytes = uint32(unsafe.Sizeof(z))
	if c.MSMWindow != 0 {
		z.MSMWindow = int32(c.MSMWindow)
	}
	if c.MSMChunk != 0 {
		z.MSMChunk = int32(c.MSMChunk)
	}
	if c.MSMSegment != 0 {
		z.MSMSegment = int32(c.MSMSegment)
	}
	if c.Spin {
		z.Spin = 1
	}
	if c.WaitPollMicros != 0 {
		z.WaitPollMicros = int32(c.WaitPollMicros)
	}
	if c.MSMPieceLog != 0 {
		z.MSMPieceLog = int32(c.MSMPieceLog)
	}
	return z
}

// Config is the configuration the backend was opened with.
func (c *CUDA) Config() CUDAConfig { return c.cfg }
