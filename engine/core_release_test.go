package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// holdingBackend is the CPU backend with a device budget's sizes, counting
// what is staged; its MSMH blocks until the job is cancelled, so that jobs
// pile up in the pipeline holding memory.
type holdingBackend struct {
	*gpu.CPU
	staged  atomic.Int64
	blocked chan struct{}
}

func (b *holdingBackend) Transfer(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error) {
	s, err := b.CPU.Transfer(ctx, r, v)
	if err == nil {
		b.staged.Add(1)
	}
	return s, err
}

func (b *holdingBackend) Free(s *proofdata.Staged) {
	b.staged.Add(-1)
	b.CPU.Free(s)
}

func (b *holdingBackend) MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	b.blocked <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b *holdingBackend) ResidentBytes(*proofdata.Key) int64  { return 1 << 20 }
func (b *holdingBackend) JobBytes(*proofdata.Key, int) int64  { return 1 << 20 }
func (b *holdingBackend) PinnedKeyBytes(*proofdata.Key) int64 { return 0 }

type fixedDevice struct{}

func (fixedDevice) DeviceMemory() (int64, int64) { return 1 << 30, 1 << 30 }

// Jobs cancelled anywhere in the pipeline hand back their staged buffers,
// their memory reservation and their device reservation.
func TestCancelledJobsGiveBackWhatTheyHold(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	cfg := provertest.Config(t.TempDir(), 2, 2)
	be := &holdingBackend{CPU: gpu.NewCPU(2, 2), blocked: make(chan struct{}, 64)}
	cfg.Backend, cfg.G2 = be, be
	g := mem.NewGovernor(mem.Config{Budget: mem.Unlimited, Device: fixedDevice{}})
	cfg.Governor = g
	eng, err := engine.NewCore(cfg, keys.Circuit(t, "mulchain"))
	if err != nil {
		t.Fatal(err)
	}
	if s := g.Stats(); s.DeviceCharged != 1<<20 {
		t.Fatalf("resident keys charged %d device bytes, want 1 MiB", s.DeviceCharged)
	}
	ctx, cancel := context.WithCancel(context.Background())
	src := make(chan *stages.Job)
	go func() {
		defer close(src)
		for i := 0; ; i++ {
			select {
			case src <- &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}}:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		// both msm-h workers blocked, and the queues behind them filling
		for range 2 {
			<-be.blocked
		}
		for be.staged.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var sunk int
	err = eng.Run(ctx, eng.Pipeline(nil), src, func(engine.CoreResult) { sunk++ })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if n := be.staged.Load(); n != 0 {
		t.Errorf("%d jobs' device buffers never freed", n)
	}
	s := g.Stats()
	if s.Reserved != 0 || s.Admitted != 0 || s.DeviceReserved != 0 || s.DeviceAdmitted != 0 {
		t.Errorf("after cancellation (%d results): reserved %d by %d jobs, device %d by %d jobs; want none",
			sunk, s.Reserved, s.Admitted, s.DeviceReserved, s.DeviceAdmitted)
	}
	if s.Granted < 3 || s.DeviceGranted < 3 {
		t.Errorf("only %d admissions and %d device admissions: the test did not fill the pipeline", s.Granted, s.DeviceGranted)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if s := g.Stats(); s.DeviceCharged != 0 {
		t.Errorf("Engine.Close left %d device bytes charged", s.DeviceCharged)
	}
}

// countingBackend is the CPU backend whose residents count their closes.
type countingBackend struct {
	*gpu.CPU
	open atomic.Int64
}

type countedResident struct {
	proofdata.Resident
	b *countingBackend
}

func (r countedResident) Close() error { r.b.open.Add(-1); return r.Resident.Close() }

func (b *countingBackend) ResidentBytes(*proofdata.Key) int64  { return 1 << 20 }
func (b *countingBackend) JobBytes(*proofdata.Key, int) int64  { return 1 << 20 }
func (b *countingBackend) PinnedKeyBytes(*proofdata.Key) int64 { return 0 }

func (b *countingBackend) Load(k *proofdata.Key) (proofdata.Resident, error) {
	r, err := b.CPU.Load(k)
	if err != nil {
		return nil, err
	}
	b.open.Add(1)
	return countedResident{r, b}, nil
}

// An engine made, run and closed many times over the same circuit leaves
// nothing loaded or charged behind it.
func TestEnginesOpenAndCloseManyTimes(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	circ := keys.Circuit(t, "mulchain")
	be := &countingBackend{CPU: gpu.NewCPU(2, 2)}
	g := mem.NewGovernor(mem.Config{Budget: mem.Unlimited, Device: fixedDevice{}})
	for i := range 20 {
		cfg := provertest.Config(t.TempDir(), 1, 1)
		cfg.Backend, cfg.G2, cfg.Governor = be, be, g
		eng, err := engine.NewCore(cfg, circ)
		if err != nil {
			t.Fatal(err)
		}
		if s := g.Stats(); s.DeviceCharged != 1<<20 {
			t.Fatalf("round %d: %d device bytes charged for the keys, want 1 MiB", i, s.DeviceCharged)
		}
		src := make(chan *stages.Job, 1)
		src <- &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}}
		close(src)
		var failed error
		if err := eng.Run(context.Background(), eng.Pipeline(nil), src, func(r engine.CoreResult) { failed = r.Err }); err != nil || failed != nil {
			t.Fatalf("round %d: %v, %v", i, err, failed)
		}
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
		if be.open.Load() != 0 || circ.Resident != nil {
			t.Fatalf("round %d: %d residents open after Close", i, be.open.Load())
		}
		if s := g.Stats(); s.DeviceCharged != 0 || s.DeviceReserved != 0 || s.Reserved != 0 {
			t.Fatalf("round %d: still held after Close: %+v", i, s)
		}
	}
}

// A circuit whose resident keys do not fit the device budget is refused at
// load, naming both sizes, and nothing is left loaded.
func TestACircuitTooLargeForTheDeviceIsRefused(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 300)
	be := &countingBackend{CPU: gpu.NewCPU(2, 2)}
	g := mem.NewGovernor(mem.Config{Budget: mem.Unlimited, Device: fixedDevice{}, DeviceBudget: 512 << 10})
	cfg := provertest.Config(t.TempDir(), 1, 1)
	cfg.Backend, cfg.G2, cfg.Governor = be, be, g
	_, err := engine.NewCore(cfg, keys.Circuit(t, "mulchain"))
	if !errors.Is(err, mem.ErrTooLarge) || !strings.Contains(err.Error(), "1.00 MiB") || !strings.Contains(err.Error(), "512 KiB") {
		t.Fatalf("New: %v, want a refusal naming 1.00 MiB of keys and the 512 KiB budget", err)
	}
	if be.open.Load() != 0 || g.Stats().DeviceCharged != 0 {
		t.Fatalf("after the refusal: %d residents open, %d bytes charged", be.open.Load(), g.Stats().DeviceCharged)
	}
}
