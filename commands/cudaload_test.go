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

// TestPlantedDependencyNeverLoads: the library zkpipe loads needs other
// libraries (libstdc++.so.6 for nvcc's, here a stand-in that names it and
// one of its own, libzkdep.so). With LD_LIBRARY_PATH giving the working
// directory (":", "."), a planted libstdc++.so.6 there, whose constructor
// writes a marker, must never run: zkpipe loads each dependency by an
// absolute path first (LD_LIBRARY_PATH's absolute elements, then system
// directories). A dependency found only through the working directory is
// refused, naming it.
func TestPlantedDependencyNeverLoads(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build the libraries")
	}
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 64)
	work, libdir := filepath.Join(root, "work"), filepath.Join(root, "lib")
	for _, d := range []string{work, libdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(root, "constructor-ran")
	cc := func(out, src string, args ...string) {
		t.Helper()
		c := filepath.Join(root, filepath.Base(out)+".c")
		if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(gcc, append([]string{"-shared", "-fPIC", "-o", out, c}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
	}
	planted := fmt.Sprintf(`#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
	int fd = open(%q, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0) close(fd);
}
`, marker)
	// the planted copies: a libstdc++.so.6 and a libzkdep.so, each with the
	// marker's constructor
	cc(filepath.Join(work, "libstdc++.so.6"), planted, "-Wl,-soname,libstdc++.so.6")
	cc(filepath.Join(work, "libzkdep.so"), planted, "-Wl,-soname,libzkdep.so")
	// the library zkpipe is given: it needs libstdc++.so.6 (from the system)
	// and, in the second case, libzkdep.so (from nowhere but the working dir)
	abi := "unsigned zk_abi_version(void *out) { return 0; }\n"
	withStd := filepath.Join(libdir, "std", gpu.CUDALibraryName)
	withDep := filepath.Join(libdir, "dep", gpu.CUDALibraryName)
	os.MkdirAll(filepath.Dir(withStd), 0o755)
	os.MkdirAll(filepath.Dir(withDep), 0o755)
	cc(withStd, abi, "-Wl,--no-as-needed", "-lstdc++")
	cc(withDep, abi, "-Wl,--no-as-needed", "-L"+work, "-lzkdep")

	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, `{"id":"a","generate":{"seed":1}}`)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "LD_LIBRARY_PATH=") && !strings.HasPrefix(e, "ZKPIPE_") {
			env = append(env, e)
		}
	}
	i := 0
	for _, lib := range []string{withStd, withDep} {
		for _, ld := range []string{":", ".", "/nonexistent::/usr/lib"} {
			i++
			t.Run(fmt.Sprintf("%s/LD_LIBRARY_PATH=%q", filepath.Base(filepath.Dir(lib)), ld), func(t *testing.T) {
				os.Remove(marker)
				cmd := exec.Command(bin, "prove", "--cuda-lib", lib, "--circuit", chain, "--jobs", jobs,
					"--out", filepath.Join(root, fmt.Sprint("out", i)), "--results", filepath.Join(root, fmt.Sprint("r", i, ".jsonl")))
				cmd.Dir = work
				cmd.Env = append(env, "LD_LIBRARY_PATH="+ld)
				out, err := cmd.CombinedOutput()
				if _, serr := os.Stat(marker); serr == nil {
					t.Fatalf("a planted dependency's constructor ran (zkpipe: %v)\n%s", err, out)
				}
				if lib == withDep && !strings.Contains(string(out), "libzkdep.so") {
					t.Fatalf("the refusal does not name the dependency (zkpipe: %v)\n%s", err, out)
				}
			})
		}
	}
}
