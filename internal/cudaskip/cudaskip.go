// Package cudaskip tells whoever runs go test that a package's CUDA tests
// were skipped, and how to run them. Those tests skip without a CUDA
// library, and a skip is silent: go test ./... prints only "ok" for a
// passing package, whatever its tests wrote, so a green run would hide that
// the CUDA backend went untested.
package cudaskip

import (
	"fmt"
	"io"
	"os"
	"testing"
)

// Hint says how to run the CUDA tests without a GPU, as scripts/test does.
const Hint = "set ZKPIPE_CUDA_LIB to libzkpipe_cuda.so (gpu/cuda/build.sh) or, without a GPU, to the host stand-in " +
	"(g++ -O2 -std=c++17 -shared -fPIC gpu/cuda/hostlib.cpp -o /tmp/libzkpipe_host.so); scripts/test runs them so"

// Notice writes one line saying pkg's CUDA tests were skipped and Hint.
// Call it from TestMain after m.Run. go test shows a passing package's
// output only with -v (or when run in the package's directory), so without
// -v the line goes to the terminal, /dev/tty, where there is one; otherwise
// (CI, -v) to stderr.
func Notice(pkg string) {
	line := fmt.Sprintf("CUDA tests skipped in %s: %s\n", pkg, Hint)
	if !testing.Verbose() {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			defer tty.Close()
			if _, err := io.WriteString(tty, line); err == nil {
				return
			}
		}
	}
	io.WriteString(os.Stderr, line)
}
