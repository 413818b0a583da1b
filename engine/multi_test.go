package engine

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// standInLib builds the host stand-in of the CUDA library (no GPU needed)
// with the g++ flags given, or skips without g++.
func standInLib(t *testing.T, flags ...string) string {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++ to build the CUDA host stand-in")
	}
	if testing.Short() {
		t.Skip("builds the CUDA host stand-in (-short)")
	}
	lib := filepath.Join(t.TempDir(), "libzkpipe_host.so")
	src, _ := filepath.Abs("../gpu/cuda/hostlib.cpp")
	args := append([]string{"-O2", "-std=c++17", "-shared", "-fPIC"}, flags...)
	if out, err := exec.Command(gxx, append(args, src, "-o", lib)...).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	return lib
}

// --cuda-device all over the stand-in pretending two GPUs: the engine
// spreads the stream over both, names each job's GPU, and every proof
// verifies with gnark.
func TestAllGPUsOfTheHost(t *testing.T) {
	lib := standInLib(t, "-DZK_HOST_DEVICES=2") // the stand-in as two GPUs
	o := cpuOptions(filepath.Join(t.TempDir(), "out"))
	o.Device, o.BG2Device = "cuda", "cuda"
	o.CUDA = CUDAOptions{Lib: lib, AllDevices: true, PinnedMiB: 1, Lanes: 1, ComputeStreams: 3}
	var log strings.Builder
	o.Log = &log
	lines, err := runAll(t, o, generated("j", 6), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(must(chainDir()), gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	on := map[string]int{}
	for _, l := range lines {
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
			continue
		}
		on[l.Device]++
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Errorf("%s on %s: gnark rejects it: %v", l.ID, l.Device, err)
		}
	}
	if on["cuda:0"] == 0 || on["cuda:1"] == 0 || len(lines) != 6 {
		t.Errorf("jobs per GPU %v over %d lines: want both GPUs used", on, len(lines))
	}
	if !strings.Contains(log.String(), "GPU 1") || !strings.Contains(log.String(), "3 compute streams") {
		t.Errorf("the log does not say GPU 1 was opened with 3 compute streams:\n%s", log.String())
	}
}
