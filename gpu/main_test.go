package gpu_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zkpipe/zkpipe/internal/cudaskip"
)

// TestMain says, after the tests, when the CUDA ones had no library to run
// on (openCUDA's and cudaLib's choice: $ZKPIPE_CUDA_LIB, else
// cuda/libzkpipe_cuda.so), since their skips are silent in go test ./... .
func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv("ZKPIPE_CUDA_LIB") == "" {
		if _, err := os.Stat(filepath.Join("cuda", "libzkpipe_cuda.so")); err != nil {
			cudaskip.Notice("gpu")
		}
	}
	os.Exit(code)
}
