package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// failing is a CPU device whose MSMH fails with a lost device from its
// n-th call on.
type failing struct {
	*gpu.CPU
	calls, from atomic.Int64
}

func (f *failing) MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	if f.calls.Add(1) >= f.from.Load() {
		return nil, fmt.Errorf("cudaErrorIllegalAddress: %w", gpu.ErrDeviceLost)
	}
	return f.CPU.MSMH(ctx, s)
}

func multiStream(t *testing.T, m *gpu.Multi, n int) []stream.Result {
	t.Helper()
	keys := provertest.Setup(t, "mulchain", 300)
	cfg := provertest.Config(t.TempDir(), 2, 1)
	cfg.Backend, cfg.G2 = m, m
	var jobs []*stages.Job
	for i := 1; i <= n; i++ {
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
	}
	lines := provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, "chain")}, jobs, 2*time.Minute)
	if len(lines) != n {
		t.Fatalf("%d result lines for %d jobs", len(lines), n)
	}
	for _, l := range lines {
		if l.Error == "" {
			if err := gnarksrc.VerifyFiles(keys.VK, l.Proof, l.Public); err != nil {
				t.Errorf("%s: gnark rejects the proof: %v", l.ID, err)
			}
		}
	}
	return lines
}

func TestMultiSpreadsJobsOverDevicesAndEveryProofVerifies(t *testing.T) {
	m, err := gpu.NewMulti([]gpu.Device{gpu.NewCPU(1, 1), gpu.NewCPU(1, 1)}, []string{"cpu:0", "cpu:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range multiStream(t, m, 8) {
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
		}
		if l.Device != "cpu:0" && l.Device != "cpu:1" {
			t.Errorf("%s: result line names device %q", l.ID, l.Device)
		}
	}
	jobs, up := m.Share()
	if jobs[0] == 0 || jobs[1] == 0 || jobs[0]+jobs[1] != 8 || !up[0] || !up[1] {
		t.Errorf("shares %v, up %v: want both devices used for the 8 jobs", jobs, up)
	}
}

// A device lost mid-stream fails only the jobs it held; the others finish
// on the device left, and every proof written verifies.
func TestMultiTakesALostDeviceOutOfRotation(t *testing.T) {
	bad := &failing{CPU: gpu.NewCPU(1, 1)}
	bad.from.Store(3)
	m, err := gpu.NewMulti([]gpu.Device{gpu.NewCPU(1, 1), bad}, []string{"cpu:0", "cpu:1"})
	if err != nil {
		t.Fatal(err)
	}
	lines := multiStream(t, m, 12)
	failed := 0
	for _, l := range lines {
		if l.Error == "" {
			continue
		}
		failed++
		if !strings.Contains(l.Error, "cpu:1") || !strings.Contains(l.Error, "device lost") {
			t.Errorf("%s: error %q should name the device and say it was lost", l.ID, l.Error)
		}
	}
	jobs, up := m.Share()
	// Only jobs staged on the lost device may fail, and once it is out every
	// job goes to cpu:0.
	if failed == 0 || int64(failed) > jobs[1] || up[1] || !up[0] || jobs[0]+jobs[1] != 12 || jobs[0] < 12/2 {
		t.Errorf("%d jobs failed, up %v, shares %v: want the failures among cpu:1's jobs and the rest on cpu:0", failed, up, jobs)
	}
}

// full is a CPU device whose transfers fail as an allocation that does not
// fit would: not a lost device.
type full struct{ *gpu.CPU }

func (full) Transfer(context.Context, proofdata.Resident, *proofdata.Vectors) (*proofdata.Staged, error) {
	return nil, fmt.Errorf("cudaMallocAsync: out of memory")
}

// A device whose transfers fail for want of memory passes its jobs to the
// others and stays in rotation: out of memory is no strike.
func TestMultiPassesJobsOnFromAFullDevice(t *testing.T) {
	m, err := gpu.NewMulti([]gpu.Device{full{gpu.NewCPU(1, 1)}, gpu.NewCPU(1, 1)}, []string{"cpu:0", "cpu:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range multiStream(t, m, 6) {
		if l.Error != "" || l.Device != "cpu:1" {
			t.Errorf("%s on %q: %s", l.ID, l.Device, l.Error)
		}
	}
	if _, up := m.Share(); !up[0] || !up[1] {
		t.Errorf("up %v: a full device is not a lost one", up)
	}
}

// batchingCPU is a CPU device that records the batches of tail MSMs it is
// given, and fails them all with a lost device when lost is set.
type batchingCPU struct {
	*gpu.CPU
	sizes []int
	lost  bool
}

func (b *batchingCPU) TailMSMG1Batch(ctx context.Context, ss []*proofdata.Staged) ([]proofdata.G1Sums, []error) {
	b.sizes = append(b.sizes, len(ss))
	if b.lost {
		errs := make([]error, len(ss))
		for i := range errs {
			errs[i] = fmt.Errorf("cudaErrorIllegalAddress: %w", gpu.ErrDeviceLost)
		}
		return make([]proofdata.G1Sums, len(ss)), errs
	}
	return b.CPU.TailMSMG1Batch(ctx, ss)
}

// Multi hands each device its own jobs of a batch as one batch, and a
// device lost in its batch fails only its jobs, naming it.
func TestMultiBatchesEachDevicesJobs(t *testing.T) {
	ctx := context.Background()
	f := newFixture(rand.New(rand.NewPCG(41, 42)), 50, mixed, proofdata.HDivideByZ, true)
	cpu := gpu.NewCPU(1, 1)
	rc, _ := cpu.Load(f.key)
	for _, lose := range []bool{false, true} {
		d0, d1 := &batchingCPU{CPU: gpu.NewCPU(1, 1)}, &batchingCPU{CPU: gpu.NewCPU(1, 1), lost: lose}
		m, err := gpu.NewMulti([]gpu.Device{d0, d1}, []string{"cpu:0", "cpu:1"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Load(f.key)
		if err != nil {
			t.Fatal(err)
		}
		var ss, want []*proofdata.Staged
		for range 5 {
			v := f.vecs()
			v.QA = classify(scalars(rand.New(rand.NewPCG(uint64(len(ss)), 1)), 50, mixed)) // a different A each job
			s, err := m.Transfer(ctx, res, v)
			if err != nil {
				t.Fatal(err)
			}
			ss = append(ss, s)
			w, _ := cpu.Transfer(ctx, rc, v)
			want = append(want, w)
		}
		got, errs := m.TailMSMG1Batch(ctx, ss)
		if fmt.Sprint(d0.sizes, d1.sizes) != "[3] [2]" {
			t.Errorf("lose %v: batches %v on cpu:0, %v on cpu:1, want [3] and [2]", lose, d0.sizes, d1.sizes)
		}
		for i, s := range ss {
			if m.On(s) == "cpu:1" && lose {
				if errs[i] == nil || !strings.Contains(errs[i].Error(), "cpu:1") || !strings.Contains(errs[i].Error(), "device lost") {
					t.Errorf("job %d on the lost cpu:1: error %v", i, errs[i])
				}
				continue
			}
			if errs[i] != nil {
				t.Fatalf("lose %v: job %d on %s: %v", lose, i, m.On(s), errs[i])
			}
			w, _ := cpu.TailMSMG1(ctx, want[i])
			eqSums(t, fmt.Sprintf("job %d", i), w, got[i])
		}
		if _, up := m.Share(); up[1] == lose {
			t.Errorf("lose %v: cpu:1 up %v", lose, up[1])
		}
	}
}
