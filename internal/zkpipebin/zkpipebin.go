// Package zkpipebin builds the zkpipe command once per test binary, for the
// tests that run it as a process (to kill it, send it signals, or run
// several workers).
package zkpipebin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var build = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkpipe-bin-")
	if err != nil {
		return "", err
	}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	bin := filepath.Join(dir, "zkpipe")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// Path builds zkpipe (once) and returns its path; under -short it skips
// the test, saying why.
func Path(t testing.TB, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("builds zkpipe and %s (-short)", why)
	}
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
