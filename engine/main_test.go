package engine

import (
	"os"
	"testing"

	"github.com/zkpipe/zkpipe/internal/cudaskip"
)

// TestMain says, after the tests, when the CUDA ones (cuda_prove_test.go)
// skipped for want of $ZKPIPE_CUDA_LIB, since their skips are silent in
// go test ./... .
func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv("ZKPIPE_CUDA_LIB") == "" {
		cudaskip.Notice("engine")
	}
	os.Exit(code)
}
