package mem

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeDevice is a DeviceMemory the test sets.
type fakeDevice struct{ free, total atomic.Int64 }

func (d *fakeDevice) DeviceMemory() (int64, int64) { return d.free.Load(), d.total.Load() }

func newDeviceGovernor(budget int64, d *fakeDevice) *Governor {
	return NewGovernor(Config{Budget: Unlimited, Measure: (&fakeMemory{}).read, Sample: time.Millisecond,
		Device: d, DeviceBudget: budget})
}

func TestResidentKeysThatDoNotFitTheDeviceAreRefusedWithBothSizes(t *testing.T) {
	d := &fakeDevice{}
	d.free.Store(10 << 30)
	d.total.Store(16 << 30)
	g := newDeviceGovernor(0, d) // budget: what is free now, 10 GiB
	if s := g.Stats(); s.DeviceBudget != 10<<30 || s.DeviceTotal != 16<<30 {
		t.Fatalf("device budget %d of %d, want 10 GiB of 16 GiB", s.DeviceBudget, s.DeviceTotal)
	}
	k, err := g.ChargeDevice(6 << 30)
	if err != nil {
		t.Fatal(err)
	}
	d.free.Add(-6 << 30)
	_, err = g.ChargeDevice(5 << 30)
	var tl *DeviceTooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("second circuit: %v, want a DeviceTooLargeError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "5.00 GiB") || !strings.Contains(msg, "10.0 GiB") {
		t.Errorf("message %q does not name the keys' size and the budget", msg)
	}
	k.Close()
	if s := g.Stats(); s.DeviceCharged != 0 {
		t.Errorf("%d bytes still charged after Close", s.DeviceCharged)
	}
	// no device: nothing is held, nothing fails
	g2 := NewGovernor(Config{Budget: Unlimited, Measure: (&fakeMemory{}).read})
	if r, err := g2.ChargeDevice(1 << 40); r != nil || err != nil {
		t.Errorf("without a device: %v, %v", r, err)
	}
	if r, err := g2.AdmitDevice(context.Background(), "j", 1<<40); r != nil || err != nil {
		t.Errorf("without a device: %v, %v", r, err)
	}
}

// admitDeviceAsync starts an AdmitDevice and returns where its outcome arrives.
func admitDeviceAsync(ctx context.Context, g *Governor, job string, need int64) <-chan *Reservation {
	out := make(chan *Reservation, 1)
	go func() {
		r, err := g.AdmitDevice(ctx, job, need)
		if err != nil {
			r = nil
		}
		out <- r
	}()
	return out
}

func TestAJobWaitsForDeviceMemoryInsteadOfFailing(t *testing.T) {
	synctest.Test(t, testAJobWaitsForDeviceMemoryInsteadOfFailing)
}

func testAJobWaitsForDeviceMemoryInsteadOfFailing(t *testing.T) {
	d := &fakeDevice{}
	d.free.Store(8 << 30)
	d.total.Store(8 << 30)
	g := newDeviceGovernor(8<<30, d)
	ctx := context.Background()
	keys, err := g.ChargeDevice(2 << 30)
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	d.free.Add(-2 << 30)

	// promised: 2 + 4 + 4 > 8 GiB, so the second job waits for the first
	a, err := g.AdmitDevice(ctx, "a", 4<<30)
	if err != nil {
		t.Fatal(err)
	}
	d.free.Add(-4 << 30)
	b := admitDeviceAsync(ctx, g, "b", 4<<30)
	settle(t, "b to wait", func() bool { return g.Stats().DeviceWaiting == 1 })
	if s := g.Stats(); s.DeviceReserved != 4<<30 || s.DeviceAdmitted != 1 {
		t.Fatalf("stats %+v", s)
	}
	if line := FormatDevice(g.Stats()); !strings.Contains(line, "1 waiting") || !strings.Contains(line, "keys 2.00 GiB") {
		t.Errorf("status %q", line)
	}
	a.Close()
	d.free.Add(4 << 30)
	rb := <-b
	if rb == nil {
		t.Fatal("b failed instead of waiting")
	}

	// measured: another process took device memory; c fits the budget but
	// not the device until it is given back
	d.free.Store(1 << 30)
	c := admitDeviceAsync(ctx, g, "c", 1<<30+1)
	settle(t, "c to wait on the device", func() bool { return g.Stats().DeviceWaiting == 1 })
	// with no job holding device memory the measured test is waived
	rb.Close()
	if r := <-c; r == nil {
		t.Fatal("c failed")
	} else {
		r.Close()
	}
	// with one job holding it, the measured test holds c back until the
	// sampler sees the memory come back
	hold, _ := g.AdmitDevice(ctx, "hold", 1)
	c = admitDeviceAsync(ctx, g, "c2", 1<<30+1)
	settle(t, "c2 to wait", func() bool { return g.Stats().DeviceWaiting == 1 })
	time.Sleep(10 * time.Millisecond) // sampler rounds that see 1 GiB free
	synctest.Wait()
	select {
	case <-c:
		t.Fatal("c2 admitted with 1 GiB free on the device")
	default:
	}
	d.free.Store(4 << 30)
	if r := <-c; r == nil {
		t.Fatal("c2 failed")
	} else {
		r.Close()
	}
	hold.Close()

	// larger than the budget beside the keys: fails at once, both sizes named
	_, err = g.AdmitDevice(ctx, "huge", 7<<30)
	var tl *DeviceTooLargeError
	if !errors.As(err, &tl) || tl.Need != 7<<30 || tl.Budget != 8<<30 || tl.Resident != 2<<30 {
		t.Fatalf("huge job: %v", err)
	}
	// a waiter whose context ends leaves the queue
	full, _ := g.AdmitDevice(ctx, "full", 6<<30)
	cctx, cancel := context.WithCancel(ctx)
	w := admitDeviceAsync(cctx, g, "w", 1<<30)
	settle(t, "w to wait", func() bool { return g.Stats().DeviceWaiting == 1 })
	cancel()
	if r := <-w; r != nil {
		t.Fatal("cancelled waiter admitted")
	}
	full.Close()
	if s := g.Stats(); s.DeviceWaiting != 0 || s.DeviceReserved != 0 || s.DeviceAdmitted != 0 {
		t.Fatalf("after all closed: %+v", s)
	}
	samplerStops(t, g)
}
