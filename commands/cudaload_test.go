package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
)

// TestPlantedCUDALibraryNeverLoads plants a libzkpipe_cuda.so whose
// constructor writes a marker file in the working directory (and in lib/,
// ./gpu/cuda/) and runs the real zkpipe there with default flags (--device
// auto) under LD_LIBRARY_PATH values that make the dynamic loader search
// the working directory: an empty element (leading, trailing, doubled, all
// of it), ".", "./" and a relative directory. The marker must never appear:
// zkpipe loads the library only by an absolute path of its own choosing.
// Before, a bare-name dlopen ran the planted constructor.
func TestPlantedCUDALibraryNeverLoads(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build the planted library")
	}
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 64)
	work := filepath.Join(root, "work")
	marker := filepath.Join(root, "constructor-ran")
	src := filepath.Join(root, "planted.c")
	if err := os.WriteFile(src, []byte(fmt.Sprintf(`#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
	int fd = open(%q, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0) close(fd);
}
unsigned zk_abi_version(void *out) { return 0; }
`, marker)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{work, filepath.Join(work, "lib"), filepath.Join(work, "gpu", "cuda")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", filepath.Join(dir, gpu.CUDALibraryName), src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, `{"id":"a","generate":{"seed":1}}`)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "LD_LIBRARY_PATH=") && !strings.HasPrefix(e, "ZKPIPE_") {
			env = append(env, e)
		}
	}
	for i, ld := range []string{":", ":/opt/cuda/lib64", "/opt/cuda/lib64:", "/opt/cuda/lib64::/usr/lib", "", ".", "./", "lib", "gpu/cuda"} {
		t.Run(fmt.Sprintf("LD_LIBRARY_PATH=%q", ld), func(t *testing.T) {
			os.Remove(marker) // each case on its own
			cmd := exec.Command(bin, "prove", "--circuit", chain, "--jobs", jobs,
				"--out", filepath.Join(root, fmt.Sprint("out", i)), "--results", filepath.Join(root, fmt.Sprint("r", i, ".jsonl")))
			cmd.Dir = work
			cmd.Env = append(env, "LD_LIBRARY_PATH="+ld)
			out, err := cmd.CombinedOutput()
			if _, serr := os.Stat(marker); serr == nil {
				t.Fatalf("the planted library's constructor ran (zkpipe: %v)\n%s", err, out)
			}
			if err != nil {
				t.Fatalf("zkpipe prove with the CPU fallback: %v\n%s", err, out)
			}
		})
	}
}
