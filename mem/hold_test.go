package mem

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A Hold (a job's witness fetched before the job is admitted) waits for the
// budget in the same line as admissions and holds its bytes, but is no
// admission: a job that held its witness, then was admitted, counts one
// admission, and the holds are neither admitted nor waiting jobs. Before,
// a fleet job counted twice (zkpipe_admissions_total 6 for 3 jobs).
func TestHoldIsNoAdmission(t *testing.T) { synctest.Test(t, testHoldIsNoAdmission) }

func testHoldIsNoAdmission(t *testing.T) {
	g := newTestGovernor(100, nil)
	ctx := context.Background()
	job, err := g.Admit(ctx, "a", 60)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan *Reservation, 1)
	go func() {
		h, err := g.Hold(ctx, "b (its witness)", 50) // over the budget beside a
		if err != nil {
			t.Error(err)
		}
		held <- h
	}()
	time.Sleep(10 * time.Millisecond)
	synctest.Wait()
	if admitted(held) {
		t.Fatal("a hold was granted over the budget")
	}
	if s := g.Stats(); s.Waiting != 0 || s.Admitted != 1 || s.Waits != 0 {
		t.Errorf("a hold waiting: %d jobs waiting, %d admitted, %d waits; want 0, 1, 0", s.Waiting, s.Admitted, s.Waits)
	}
	job.Close()
	var h *Reservation
	select {
	case h = <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("the hold not granted once there was room")
	}
	if s := g.Stats(); s.Reserved != 50 || s.Admitted != 0 || s.Granted != 1 {
		t.Errorf("a hold granted: %d reserved, %d admitted, %d granted; want 50, 0, 1", s.Reserved, s.Admitted, s.Granted)
	}
	// b's own admission, beside its witness's hold
	b, err := g.Admit(ctx, "b", 40)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	b.Close()
	s := g.Stats()
	if s.Granted != 2 || s.Admitted != 0 || s.Reserved != 0 || s.PeakAdmitted != 1 || s.Waits != 0 {
		t.Errorf("two jobs, one with a hold: %+v; want 2 granted, none admitted or reserved now, at most 1 at once, no waits", s)
	}
	samplerStops(t, g)
}
