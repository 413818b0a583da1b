package commands

import (
	"os"
	"strconv"

	"github.com/zkpipe/zkpipe/gpu"
)

// The CUDA backend's tuning knobs that have no flag, read from the
// environment here and nowhere else: gpu and its library take them as a
// gpu.CUDAConfig (zk_config at zk_init). Each keeps the meaning it had when
// the library read it with getenv: a value out of range, or not a number,
// is ignored (the default stays), as it was.
//
//	ZKPIPE_MSM_WINDOW       MSM window bits, 4 to 24 (unset: by size)
//	ZKPIPE_MSM_CHUNK        points a GPU thread sums a level, 2 to 256 (32; BLS12-381 G1 64, G2 128)
//	ZKPIPE_MSM_SEGMENT      buckets a thread reduces, a power of two 2 to 256
//	ZKPIPE_CUDA_SPIN        1: host threads spin while waiting for the GPU
//	ZKPIPE_CUDA_WAIT_POLL_US without spin, µs between looks at an MSM's last steps, 1 to 1000 (20); -1: blocking sync
//	ZKPIPE_MSM_PIECE_LOG    an MSM of more scalars than 2^this runs in pieces of that many, 10 to 30 (24)
//	ZKPIPE_CUDA_TAIL_SPLIT  0: one job's tail MSMs run one after another
//	LD_LIBRARY_PATH         where the library's own dependencies are looked
//	                        for first (absolute elements only; gpu.FindCUDALibrary)
//
// The variants measured off in ABI 9 (ZKPIPE_NTT, ZKPIPE_NTT_STAGES, _BLOCK,
// _VARIANT, _LAZY, _LANES, ZKPIPE_MSM_AFFINE and its _STOP, _BATCH, _MIN,
// ZKPIPE_MSM_PREFETCH, ZKPIPE_CUDA_POOL_DEPS) are gone: notes/cuda-variants.md.

// cudaConfigFromEnv is the environment's gpu.CUDAConfig.
func cudaConfigFromEnv() gpu.CUDAConfig {
	return cudaConfigOf(os.Getenv)
}

// cudaConfigOf reads the knobs through getenv (os.Getenv; tests give a map's).
func cudaConfigOf(getenv func(string) string) gpu.CUDAConfig {
	var c gpu.CUDAConfig
	if v, ok := envInt(getenv, "ZKPIPE_MSM_WINDOW"); ok && v >= 4 && v <= gpu.MaxMSMWindow {
		c.MSMWindow = v
	}
	if v, ok := envInt(getenv, "ZKPIPE_MSM_CHUNK"); ok && v >= 2 && v <= 256 {
		c.MSMChunk = v
	}
	if v, ok := envInt(getenv, "ZKPIPE_MSM_SEGMENT"); ok && v >= 2 && v <= 256 && v&(v-1) == 0 {
		c.MSMSegment = v
	}
	c.Spin = getenv("ZKPIPE_CUDA_SPIN") == "1"
	if v, ok := envInt(getenv, "ZKPIPE_CUDA_WAIT_POLL_US"); ok && (v == -1 || v >= 1 && v <= 1000) {
		c.WaitPollMicros = v
	}
	if v, ok := envInt(getenv, "ZKPIPE_MSM_PIECE_LOG"); ok && v >= gpu.MinMSMPieceLog && v <= gpu.MaxMSMPieceLog {
		c.MSMPieceLog = v
	}
	c.SerialTails = getenv("ZKPIPE_CUDA_TAIL_SPLIT") == "0"
	c.LibraryPath = getenv("LD_LIBRARY_PATH")
	return c
}

// envInt is the integer value of the variable name, if it has one. The
// library read these with atoi, which takes a leading number and ignores
// the rest ("22x" was 22); a value that is not all digits is ignored here.
func envInt(getenv func(string) string, name string) (int, bool) {
	v, err := strconv.Atoi(getenv(name))
	return v, err == nil
}
