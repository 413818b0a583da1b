package mem

import (
	"context"
	"errors"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeMemory is a Measure the test sets.
type fakeMemory struct{ rss, reusable, faults atomic.Int64 }

func (f *fakeMemory) read() Usage {
	return Usage{RSS: f.rss.Load(), Reusable: f.reusable.Load(), MinorFaults: f.faults.Load()}
}

func newTestGovernor(budget int64, f *fakeMemory) *Governor {
	if f == nil {
		f = &fakeMemory{}
	}
	return NewGovernor(Config{Budget: budget, Pinned: budget / 2, Measure: f.read, Sample: time.Millisecond})
}

// admitAsync starts an Admit and returns where its outcome will arrive.
func admitAsync(ctx context.Context, g *Governor, job string, need int64) <-chan *Reservation {
	out := make(chan *Reservation, 1)
	go func() {
		r, err := g.Admit(ctx, job, need)
		if err != nil {
			r = nil
		}
		out <- r
	}()
	return out
}

// A TestX that only calls synctest.Test(t, testX) runs testX in a bubble:
// the governor's sampler ticks on the bubble's fake clock, sleeps and
// timeouts cost no time, and synctest.Wait stands for "long enough".

// settle waits until every goroutine in the test's synctest bubble is
// blocked, then wants cond to hold: whatever polling would have waited for
// has happened by then, or never will.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("%s: not so once every goroutine is blocked", what)
	}
}

// samplerStops gives g's sampler one more round of the bubble's clock, in
// which it must see nothing in flight and return: a synctest bubble ends
// only once its goroutines have, and its clock stands still after the test
// function returns.
func samplerStops(t *testing.T, g *Governor) {
	t.Helper()
	time.Sleep(g.period)
	synctest.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sampling {
		t.Fatal("the sampler still runs with nothing in flight")
	}
}

func admitted(ch <-chan *Reservation) bool {
	select {
	case r := <-ch:
		if r == nil {
			panic("admission failed")
		}
		return true
	default:
		return false
	}
}

func TestAdmitInArrivalOrder(t *testing.T) { synctest.Test(t, testAdmitInArrivalOrder) }

func testAdmitInArrivalOrder(t *testing.T) {
	g := newTestGovernor(100, nil)
	ctx := context.Background()
	first, err := g.Admit(ctx, "first", 60)
	if err != nil {
		t.Fatal(err)
	}
	big := admitAsync(ctx, g, "big", 50)
	settle(t, "big to queue", func() bool { return g.Stats().Waiting == 1 })
	small := admitAsync(ctx, g, "small", 10) // would fit, but arrives after big
	settle(t, "small to queue", func() bool { return g.Stats().Waiting == 2 })
	time.Sleep(10 * time.Millisecond) // ten sampler rounds, on the bubble's clock
	synctest.Wait()
	if admitted(big) || admitted(small) {
		t.Fatal("a job was admitted over the budget or ahead of an earlier one")
	}

	first.Release(10) // 50 held: big fits now (100), small not yet
	var rb *Reservation
	select {
	case rb = <-big:
	case <-time.After(5 * time.Second):
		t.Fatal("big not admitted after an early release")
	}
	time.Sleep(10 * time.Millisecond)
	synctest.Wait()
	if admitted(small) {
		t.Fatal("small admitted over the budget")
	}
	first.Close()
	select {
	case rs := <-small:
		rs.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("small not admitted after close")
	}
	rb.Close()

	s := g.Stats()
	if s.Granted != 3 || s.Waits != 2 || s.Admitted != 0 || s.Reserved != 0 || s.PeakAdmitted != 2 || s.PeakReserved != 100 {
		t.Fatalf("stats %+v", s)
	}
	samplerStops(t, g)
}

func TestTooLargeFailsAtOnce(t *testing.T) {
	g := newTestGovernor(100<<20, nil)
	start := time.Now()
	_, err := g.Admit(context.Background(), "j", 150<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want a TooLargeError", err)
	}
	for _, size := range []string{"150 MiB", "100 MiB"} {
		if !strings.Contains(err.Error(), size) {
			t.Errorf("%q does not name %s", err, size)
		}
	}
	keys := g.Charge(30 << 20) // resident keys leave 70 MiB
	_, err = g.Admit(context.Background(), "k", 80<<20)
	for _, size := range []string{"80.0 MiB", "70.0 MiB", "100 MiB", "30.0 MiB"} {
		if err == nil || !strings.Contains(err.Error(), size) {
			t.Errorf("%v does not name %s", err, size)
		}
	}
	if time.Since(start) > time.Second {
		t.Errorf("rejections took %v", time.Since(start))
	}
	if s := g.Stats(); s.Rejected != 2 || s.Granted != 0 || s.Charged != 30<<20 {
		t.Fatalf("stats %+v", s)
	}
	more := g.Charge(90 << 20)
	if _, err = g.Admit(context.Background(), "k", 1); err == nil || !strings.Contains(err.Error(), "(120 MiB) already fill the 100 MiB memory budget") {
		t.Errorf("budget full of keys: %v", err)
	}
	more.Close()
	keys.Close()
	if r, err := g.Admit(context.Background(), "k", 80<<20); err != nil {
		t.Fatalf("after the keys are gone: %v", err)
	} else {
		r.Close()
	}
}

func TestCancelledWaiterLetsOthersThrough(t *testing.T) {
	synctest.Test(t, testCancelledWaiterLetsOthersThrough)
}

func testCancelledWaiterLetsOthersThrough(t *testing.T) {
	g := newTestGovernor(100, nil)
	hold, _ := g.Admit(context.Background(), "hold", 60)
	ctx, cancel := context.WithCancel(context.Background())
	blocked := make(chan error, 1)
	go func() { _, err := g.Admit(ctx, "blocked", 50); blocked <- err }()
	settle(t, "blocked to queue", func() bool { return g.Stats().Waiting == 1 })
	behind := admitAsync(context.Background(), g, "behind", 30)
	settle(t, "behind to queue", func() bool { return g.Stats().Waiting == 2 })

	cancel()
	select {
	case err := <-blocked:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled admission: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancellation did not unblock Admit")
	}
	select {
	case r := <-behind:
		r.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the job behind a cancelled one was not admitted")
	}
	hold.Close()
	if s := g.Stats(); s.Waiting != 0 || s.Reserved != 0 || s.Granted != 2 {
		t.Fatalf("stats %+v", s)
	}
	samplerStops(t, g)
}

// Measured RSS holds what admitted jobs touched: adding it to their
// reservations would count them twice and admit one job where two fit.
func TestMeasuredRSSIsNotCountedTwice(t *testing.T) {
	synctest.Test(t, testMeasuredRSSIsNotCountedTwice)
}

func testMeasuredRSSIsNotCountedTwice(t *testing.T) {
	f := &fakeMemory{}
	g := newTestGovernor(1000, f)
	a, _ := g.Admit(context.Background(), "a", 400)
	f.rss.Store(400) // a touched all it reserved
	b := admitAsync(context.Background(), g, "b", 400)
	select {
	case r := <-b:
		r.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("b held back: rss and reservations counted twice")
	}
	a.Close()
	samplerStops(t, g)
}

func TestMeasuredRSSHoldsBack(t *testing.T) { synctest.Test(t, testMeasuredRSSHoldsBack) }

func testMeasuredRSSHoldsBack(t *testing.T) {
	f := &fakeMemory{}
	f.rss.Store(900) // untracked memory, say garbage or a source's copies
	g := newTestGovernor(1000, f)
	a, _ := g.Admit(context.Background(), "a", 300) // nothing in flight: let in
	if s := g.Stats(); s.Forced != 1 {
		t.Fatalf("first admission: %+v", s)
	}
	b := admitAsync(context.Background(), g, "b", 300) // promised 600 fits, measured 1200 not
	settle(t, "b to queue", func() bool { return g.Stats().Waiting == 1 })
	time.Sleep(20 * time.Millisecond) // twenty sampler rounds
	synctest.Wait()
	if admitted(b) {
		t.Fatal("b admitted while RSS leaves no room")
	}
	f.rss.Store(500) // the garbage went: only the sampler can notice
	select {
	case r := <-b:
		r.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("b not admitted once RSS fell")
	}
	a.Close()
	samplerStops(t, g)
}

// Idle pool buffers and free heap are resident but reusable: a job that can
// draw on them adds nothing to RSS.
func TestReusableMemoryIsDrawnOnFirst(t *testing.T) {
	f := &fakeMemory{}
	g := newTestGovernor(1000, f)
	a, _ := g.Admit(context.Background(), "a", 300)
	f.rss.Store(900)
	f.reusable.Store(400) // e.g. the buffers of a job that just left
	r, err := g.Admit(context.Background(), "b", 300)
	if err != nil {
		t.Fatal(err)
	}
	if s := g.Stats(); s.Waits != 0 || s.Forced != 0 {
		t.Fatalf("b waited: %+v", s)
	}
	r.Close()
	a.Close()
}

func TestFaultsAndPeakPerJob(t *testing.T) {
	f := &fakeMemory{}
	g := NewGovernor(Config{Budget: 1000, Measure: f.read, Sample: time.Hour}) // samples only when asked
	a, _ := g.Admit(context.Background(), "a", 100)
	f.faults.Add(100)
	f.rss.Store(700)
	g.Sample() // a alone: all 100 are a's
	f.rss.Store(300)
	b, _ := g.Admit(context.Background(), "b", 100)
	f.faults.Add(50)
	a.Close() // a and b share 50
	f.faults.Add(10)
	b.Close() // b alone
	if got := a.MinorFaults(); got != 125 {
		t.Errorf("a: %d faults, want 125", got)
	}
	if got := b.MinorFaults(); got != 35 {
		t.Errorf("b: %d faults, want 35", got)
	}
	if a.PeakRSS() != 700 || b.PeakRSS() != 300 {
		t.Errorf("peaks %d and %d, want 700 and 300", a.PeakRSS(), b.PeakRSS())
	}
	if a.Reserved() != 100 || a.Bytes() != 0 {
		t.Errorf("a reserved %d, holds %d", a.Reserved(), a.Bytes())
	}
}

func TestChargePinned(t *testing.T) {
	g := newTestGovernor(1000, nil) // pinned budget 500
	p, err := g.ChargePinned(400)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.ChargePinned(200); err == nil || !strings.Contains(err.Error(), "pinned budget") {
		t.Fatalf("over the pinned budget: %v", err)
	}
	if s := g.Stats(); s.Pinned != 400 || s.Charged != 400 {
		t.Fatalf("stats %+v", s)
	}
	// pinned memory is resident: a job needing more than the rest is too large
	if _, err := g.Admit(context.Background(), "j", 700); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("admission beside 400 pinned: %v", err)
	}
	p.Close()
	if s := g.Stats(); s.Pinned != 0 || s.Charged != 0 {
		t.Fatalf("after close: %+v", s)
	}
}

func TestUnlimitedAdmitsEverything(t *testing.T) {
	f := &fakeMemory{}
	f.rss.Store(1 << 40)
	g := NewGovernor(Config{Budget: Unlimited, Measure: f.read})
	var rs []*Reservation
	for range 10 {
		r, err := g.Admit(context.Background(), "j", 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if s := g.Stats(); s.PeakAdmitted != 10 || s.Waits != 0 {
		t.Fatalf("stats %+v", s)
	}
	for _, r := range rs {
		r.Close()
	}
}

// Many jobs racing through a budget of three never have more than three in.
func TestConcurrentAdmissionsStayUnderBudget(t *testing.T) {
	synctest.Test(t, testConcurrentAdmissionsStayUnderBudget)
}

func testConcurrentAdmissionsStayUnderBudget(t *testing.T) {
	g := newTestGovernor(300, nil)
	var in, peak atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := g.Admit(context.Background(), "j", 100)
			if err != nil {
				t.Error(err)
				return
			}
			n := in.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(time.Duration(i%3) * time.Millisecond)
			r.Release(30)
			in.Add(-1)
			r.Close()
		}()
	}
	wg.Wait()
	s := g.Stats()
	if peak.Load() > 3 || s.PeakAdmitted > 3 || s.Granted != 40 || s.Reserved != 0 || s.Admitted != 0 {
		t.Fatalf("peak %d, stats %+v", peak.Load(), s)
	}
	samplerStops(t, g)
}

func TestReadUsage(t *testing.T) {
	u := ReadUsage()
	if u.RSS <= 0 || u.MinorFaults <= 0 || u.Reusable < 0 {
		t.Fatalf("usage %+v", u)
	}
	buf := make([]byte, 64<<20)
	touch(buf)
	v := ReadUsage()
	// RSS may also shrink meanwhile (the scavenger returning earlier tests'
	// garbage), so it is checked absolutely; faults only grow.
	if v.RSS < 64<<20 || v.MinorFaults < u.MinorFaults+(32<<20)/pageSize {
		t.Fatalf("touching 64 MiB: rss %d → %d, faults %d → %d", u.RSS, v.RSS, u.MinorFaults, v.MinorFaults)
	}
	// the live buffer is held by the runtime beside its free heap
	if v.GoHeld < 64<<20 || v.GoHeld > v.Go {
		t.Fatalf("holding 64 MiB: Go held %d of the runtime's %d", v.GoHeld, v.Go)
	}
	_ = buf[0]
}

// A charge made while a job waits can leave it no room at all: it fails
// rather than waiting forever.
func TestWaiterFailsWhenAChargeLeavesNoRoom(t *testing.T) {
	synctest.Test(t, testWaiterFailsWhenAChargeLeavesNoRoom)
}

func testWaiterFailsWhenAChargeLeavesNoRoom(t *testing.T) {
	g := newTestGovernor(100, nil)
	hold, _ := g.Admit(context.Background(), "hold", 60)
	failed := make(chan error, 1)
	go func() { _, err := g.Admit(context.Background(), "big", 80); failed <- err }()
	settle(t, "big to queue", func() bool { return g.Stats().Waiting == 1 })
	keys := g.Charge(30)
	hold.Close() // wakes the queue: 80 no longer fits beside 30 of keys
	select {
	case err := <-failed:
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err = %v, want a TooLargeError", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job waits forever")
	}
	keys.Close()
	samplerStops(t, g)
}

// The governor reports the Go memory limit that keeps RSS in the budget,
// and again as pinned memory comes and goes, but sets nothing in the
// runtime itself: the limit and GOGC are its caller's (engine.SetGoLimit).
func TestGoLimitFollowsTheBudgetAndTheRuntimeIsLeftAlone(t *testing.T) {
	limit0 := debug.SetMemoryLimit(-1)
	gc0 := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc0)
	f := &fakeMemory{}
	f.rss.Store(100 << 20) // all of it the runtime's (Go = 0 in the fake: 100 MiB not Go's)
	var limits []int64
	g := NewGovernor(Config{Budget: 1 << 30, Pinned: 1 << 30, Measure: f.read, GoLimit: func(l int64) { limits = append(limits, l) }})
	if len(limits) != 1 || limits[0] != 1<<30-100<<20 {
		t.Fatalf("Go limits %v at start, want the budget less 100 MiB of non-Go RSS", limits)
	}
	p, err := g.ChargePinned(200 << 20) // more than the non-Go RSS the fake shows
	if err != nil {
		t.Fatal(err)
	}
	if got := limits[len(limits)-1]; got != 1<<30-200<<20 {
		t.Errorf("Go limit %d with 200 MiB pinned, want the budget less the pinned memory", got)
	}
	p.Close()
	if got := limits[len(limits)-1]; got != 1<<30-100<<20 {
		t.Errorf("Go limit %d once the pinned memory is freed, want the budget less 100 MiB again", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit0 {
		t.Errorf("the governor set the Go memory limit to %d (was %d)", got, limit0)
	}
	if got := debug.SetGCPercent(gc0); got != gc0 {
		t.Errorf("the governor set GOGC to %d (was %d)", got, gc0)
	}

	// Unlimited: nothing to follow, so GoLimit is never called.
	limits = nil
	NewGovernor(Config{Budget: Unlimited, Measure: f.read, GoLimit: func(l int64) { limits = append(limits, l) }}).Charge(1 << 20).Close()
	if len(limits) != 0 {
		t.Errorf("Go limits %v under an unlimited budget", limits)
	}
}
