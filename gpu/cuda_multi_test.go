package gpu_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/keysink"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
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

// A key file's bases, left unread by gnarksrc.LoadDir, are read once for
// both stand-in devices (one Stream, each chunk written to both), and
// every proof of a stream spread over them verifies: each device got
// every base.
func TestCUDAMultiStreamsTheKeyFileOnce(t *testing.T) {
	dev0, dev1, _ := standInPair(t)
	c, vk := deferredMulchain(t)
	bases := proofdata.PartA | proofdata.PartB1 | proofdata.PartK | proofdata.PartZ | proofdata.PartB2
	if c.Key.Deferred()&bases != bases {
		t.Fatalf("LoadDir deferred parts %06b, want the bases %06b", c.Key.Deferred(), bases)
	}
	watch := keysink.WatchKey(c.Key)

	m, err := gpu.NewMulti([]gpu.Device{dev0, dev1}, []string{"cuda:0", "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := provertest.Config(t.TempDir(), 2, 1)
	cfg.Backend, cfg.G2 = m, m
	var jobs []*stages.Job
	for i := range 6 {
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
	}
	lines := provertest.Run(t, cfg, []*stages.Circuit{c}, jobs, 5*time.Minute)
	if n := watch.Streams(); n != 1 || watch.Streamed() != bases || watch.Fetched() != 0 {
		t.Errorf("%d streams of parts %06b, fetched %06b: want the key file's bases %06b read once, for both devices", n, watch.Streamed(), watch.Fetched(), bases)
	}
	if len(lines) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(lines), len(jobs))
	}
	for _, l := range lines {
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
		} else if err := verify(vk, l); err != nil {
			t.Errorf("%s on %s: gnark rejects it: %v", l.ID, l.Device, err)
		}
	}
	if jobs, _ := m.Share(); jobs[0] == 0 || jobs[1] == 0 {
		t.Errorf("shares %v: both devices should prove", jobs)
	}
}

// A device whose writes fail partway through the one stream of a key file
// drops out of it: the other device still loads the key and proves every
// job, the failed device's buffers are freed, and a key neither device
// can take is an error naming both, holding nothing.
func TestCUDAMultiStreamGoesOnWithoutAFailedDevice(t *testing.T) {
	dev0, dev1, host := standInPair(t)
	c, vk := deferredMulchain(t)
	watch := keysink.WatchKey(c.Key)

	// what one device's load holds
	live0, bytes0 := host.Live(), host.Allocated()
	r0, err := dev0.Load(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	one, oneBytes := host.Live()-live0, host.Allocated()-bytes0
	if err := r0.Close(); err != nil {
		t.Fatal(err)
	}
	s0 := watch.Streams()

	// device 1's uploads fail from its second on: mid-stream
	if host.FailOn(1, "copy", -2) != 0 {
		t.Fatal("zk_host_fail_on refused")
	}
	defer host.FailOn(1, "copy", 0)
	m, err := gpu.NewMulti([]gpu.Device{dev0, dev1}, []string{"cuda:0", "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Load(c.Key)
	if err != nil {
		t.Fatalf("cuda:0 should hold the key: %v", err)
	}
	if n := watch.Streams() - s0; n != 1 {
		t.Errorf("%d streams of the key file, want 1", n)
	}
	if live, b := host.Live()-live0, host.Allocated()-bytes0; live != one || b != oneBytes {
		t.Errorf("%d allocations of %d bytes held, want one device's %d of %d: cuda:1's failed load should free its buffers", live, b, one, oneBytes)
	}
	c.Resident = res
	cfg := provertest.Config(t.TempDir(), 2, 1)
	cfg.Backend, cfg.G2 = m, m
	var jobs []*stages.Job
	for i := range 4 {
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
	}
	for _, l := range provertest.Run(t, cfg, []*stages.Circuit{c}, jobs, 5*time.Minute) {
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
		} else if err := verify(vk, l); err != nil || l.Device != "cuda:0" {
			t.Errorf("%s on %s: %v (want it on cuda:0, verified)", l.ID, l.Device, err)
		}
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if live := host.Live() - live0; live != 0 {
		t.Errorf("%d allocations held after the key's Close", live)
	}

	// both devices fail: the one stream stops, each device named, nothing held
	if host.FailOn(0, "copy", -2) != 0 {
		t.Fatal("zk_host_fail_on refused")
	}
	defer host.FailOn(0, "copy", 0)
	s0 = watch.Streams()
	if _, err := m.Load(c.Key); err == nil || !strings.Contains(err.Error(), "cuda:0") || !strings.Contains(err.Error(), "cuda:1") {
		t.Errorf("load on two failing devices: %v, want an error naming both", err)
	}
	if n, live := watch.Streams()-s0, host.Live()-live0; n != 1 || live != 0 {
		t.Errorf("%d streams, %d allocations held: want 1 and none", n, live)
	}
}

// standInPair opens the host stand-in as two devices; at the test's end
// both are closed and the stand-in is one device again.
func standInPair(t *testing.T) (dev0, dev1 *gpu.CUDA, host *gpu.HostStandIn) {
	t.Helper()
	dev0 = openOwn(t, gpu.WithCUDADevice(0))
	host = standIn(t, dev0)
	t.Cleanup(func() { dev0.Close() })
	if host.SetDevices(2) != 0 {
		t.Fatal("zk_host_set_devices(2) refused")
	}
	t.Cleanup(func() { host.SetDevices(1) })
	dev1 = openOwn(t, gpu.WithCUDADevice(1))
	t.Cleanup(func() { dev1.Close() })
	return dev0, dev1, host
}

// deferredMulchain sets up mulchain at 300 constraints in a directory and
// loads it as a stream would: its key's bases left in the file.
func deferredMulchain(t *testing.T) (*stages.Circuit, groth16.VerifyingKey) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chain")
	if _, err := gnarksrc.Setup("mulchain", 300, dir); err != nil {
		t.Fatal(err)
	}
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	return c, vk
}
