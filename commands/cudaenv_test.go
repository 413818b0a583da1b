package commands

import (
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
)

// The CUDA knobs keep the meanings the library's getenv gave them: unset
// or out of range is the default, and each reaches its gpu.CUDAConfig field.
func TestCUDAConfigFromTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want gpu.CUDAConfig
	}{
		{nil, gpu.CUDAConfig{}},
		{map[string]string{"ZKPIPE_MSM_WINDOW": "22", "ZKPIPE_MSM_CHUNK": "8", "ZKPIPE_MSM_SEGMENT": "16"},
			gpu.CUDAConfig{MSMWindow: 22, MSMChunk: 8, MSMSegment: 16}},
		{map[string]string{"ZKPIPE_MSM_WINDOW": "3", "ZKPIPE_MSM_CHUNK": "1", "ZKPIPE_MSM_SEGMENT": "12"}, gpu.CUDAConfig{}},
		{map[string]string{"ZKPIPE_MSM_WINDOW": "25", "ZKPIPE_MSM_CHUNK": "257", "ZKPIPE_MSM_SEGMENT": "512"}, gpu.CUDAConfig{}},
		{map[string]string{"ZKPIPE_MSM_WINDOW": "wide"}, gpu.CUDAConfig{}},
		{map[string]string{"ZKPIPE_CUDA_SPIN": "1", "ZKPIPE_CUDA_TAIL_SPLIT": "0", "LD_LIBRARY_PATH": "/opt/cuda/lib64:"},
			gpu.CUDAConfig{Spin: true, SerialTails: true, LibraryPath: "/opt/cuda/lib64:"}},
		{map[string]string{"ZKPIPE_CUDA_SPIN": "0", "ZKPIPE_CUDA_TAIL_SPLIT": "1"}, gpu.CUDAConfig{}},
		{map[string]string{"ZKPIPE_CUDA_WAIT_POLL_US": "-1"}, gpu.CUDAConfig{WaitPollMicros: -1}},
		{map[string]string{"ZKPIPE_CUDA_WAIT_POLL_US": "50"}, gpu.CUDAConfig{WaitPollMicros: 50}},
		{map[string]string{"ZKPIPE_MSM_PIECE_LOG": "20"}, gpu.CUDAConfig{MSMPieceLog: 20}},
		{map[string]string{"ZKPIPE_MSM_PIECE_LOG": "9"}, gpu.CUDAConfig{}},
		{map[string]string{"ZKPIPE_CUDA_WAIT_POLL_US": "1001"}, gpu.CUDAConfig{}},
		{map[string]string{"ZKPIPE_CUDA_WAIT_POLL_US": "-2"}, gpu.CUDAConfig{}},
	} {
		if got := cudaConfigOf(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.env, got, c.want)
		}
	}
}
