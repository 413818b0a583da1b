package gpu_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// The host stand-in pretending to be two GPUs (zk_host_set_devices): a
// stream spreads over both, every proof verifies with gnark; then one
// device is lost mid-stream, and only its jobs in flight fail.
func TestCUDAMultiDeviceOverTheStandIn(t *testing.T) {
	dev0 := openOwn(t, gpu.WithCUDADevice(0))
	host := standIn(t, dev0)
	defer dev0.Close()
	if host.SetDevices(2) != 0 {
		t.Fatal("zk_host_set_devices(2) refused")
	}
	defer host.SetDevices(1)
	dev1 := openOwn(t, gpu.WithCUDADevice(1))
	defer dev1.Close()
	if dev1.Index() != 1 {
		t.Fatalf("device index %d", dev1.Index())
	}
	keys := provertest.Setup(t, "mulchain", 300)

	run := func(m *gpu.Multi, n int) []stream.Result {
		cfg := provertest.Config(t.TempDir(), 2, 1)
		cfg.Backend, cfg.G2 = m, m
		var jobs []*stages.Job
		for i := range n {
			jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
		}
		lines := provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, "chain")}, jobs, 5*time.Minute)
		if len(lines) != n {
			t.Fatalf("%d results for %d jobs", len(lines), n)
		}
		for _, l := range lines {
			if l.Error == "" {
				if err := verify(keys.VK, l); err != nil {
					t.Errorf("%s on %s: gnark rejects it: %v", l.ID, l.Device, err)
				}
			}
		}
		return lines
	}
	labels := []string{"cuda:0", "cuda:1"}

	m, err := gpu.NewMulti([]gpu.Device{dev0, dev1}, labels)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range run(m, 6) {
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
		}
	}
	if jobs, _ := m.Share(); jobs[0] == 0 || jobs[1] == 0 {
		t.Errorf("shares %v: both devices should prove", jobs)
	}

	// Device 1 lost from its 40th kernel on: after the keys are loaded, mid-stream.
	if host.FailOn(1, "kernel", -40) != 0 {
		t.Fatal("zk_host_fail_on refused")
	}
	defer host.FailOn(1, "kernel", 0)
	m, err = gpu.NewMulti([]gpu.Device{dev0, dev1}, labels)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, l := range run(m, 8) {
		if l.Error == "" {
			continue
		}
		failed++
		if !strings.Contains(l.Error, "cuda:1") || !strings.Contains(l.Error, "lost") {
			t.Errorf("%s: %q should name cuda:1 and say it was lost", l.ID, l.Error)
		}
	}
	jobs, up := m.Share()
	if failed == 0 || int64(failed) > jobs[1] || up[1] || !up[0] {
		t.Errorf("%d failed, shares %v, up %v: want only cuda:1's jobs failed and cuda:1 out of rotation", failed, jobs, up)
	}
}
