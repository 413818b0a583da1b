package engine

import (
	"path/filepath"
	"testing"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// A result line names the GPU that ran the job's device stages with one
// GPU too: --cuda-device all over the host stand-in as built by default
// (one device), and --cuda-device 1 over the stand-in as two (the line says
// cuda:1, not the first). Before, only an engine of several GPUs (gpu.Multi)
// named them: over one, the lines named none.
func TestCUDAOneGPUNamedInResultLines(t *testing.T) {
	one := standInLib(t)
	two := standInLib(t, "-DZK_HOST_DEVICES=2")
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(must(chainDir()), gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		cuda CUDAOptions
		want string
	}{
		{"all of one", CUDAOptions{Lib: one, AllDevices: true}, "cuda:0"},
		{"the second of two", CUDAOptions{Lib: two, Devices: []int{1}}, "cuda:1"},
	} {
		o := cpuOptions(filepath.Join(t.TempDir(), "out"))
		o.Device, o.BG2Device = "cuda", "cuda"
		c.cuda.PinnedMiB, c.cuda.Lanes = 1, 1
		o.CUDA = c.cuda
		lines, err := runAll(t, o, generated("j", 3), loadChain(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 3 {
			t.Fatalf("%s: %d lines", c.what, len(lines))
		}
		for _, l := range lines {
			if l.Error != "" {
				t.Errorf("%s: %s: %s", c.what, l.ID, l.Error)
				continue
			}
			if l.Device != c.want {
				t.Errorf("%s: %s ran on %q, want %s", c.what, l.ID, l.Device, c.want)
			}
			if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
				t.Errorf("%s: %s: gnark rejects it: %v", c.what, l.ID, err)
			}
		}
	}
}
