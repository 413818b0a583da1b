package mem

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Governor admits jobs under an RSS budget, and accounts for the pinned
// budget (stages.Governor). It satisfies stages.Governor: the synthesize stage
// calls Admit before a job's vectors exist, so a job that does not fit waits
// there and pushes back on parse.
//
// A job is admitted when both of these hold:
//
//	promised:  charged + reserved + need ≤ budget
//	measured:  max(rss, charged + reserved + reusable) + max(0, need − reusable) ≤ budget
//
// where charged is what resident keys and pinned pools hold for the whole run
// (Charge, ChargePinned), reserved what admitted jobs still hold, rss the
// process's resident memory now and reusable the part of it no job owns but
// the next can reuse without faulting in new pages (Pools' idle buffers, free
// Go heap). The measured test does not count reserved memory twice: rss
// already holds what admitted jobs have touched, so the two are combined with
// max, not added; what rss shows beyond every promise (the runtime, garbage,
// the sources' own copies of keys) is counted once. It is exact when admitted
// jobs have touched all they reserved, and conservative when several are
// admitted from one reading; it can be optimistic only for a job admitted
// a moment ago that has not touched its memory yet while garbage is high.
//
// Jobs are admitted in arrival order: one that does not fit holds back those
// behind it, so a large job is not starved by small ones. A job larger than
// the whole budget fails at once (TooLargeError). When nothing is admitted,
// the next job is let in even if the measured test fails, for there is
// nothing left to wait for (counted as Forced); the promised test still holds.
// While the measured test is what holds a job back, the governor starts a
// garbage collection at most once a second, so that garbage is not mistaken
// for memory in use.
type Governor struct {
	budget, pinnedBudget int64
	measure              func() Usage
	gc                   func() // nil when measuring is not the process's own
	period               time.Duration
	goLimit              func(int64) // Config.GoLimit; nil without a budget

	mu       sync.Mutex
	charged  int64 // resident keys and pinned pools, against budget
	pinned   int64 // pinned pools, against pinnedBudget
	reserved int64 // what admitted jobs still hold
	queue    []*waiter
	inflight map[*Reservation]struct{} // admitted (or held: Hold), not yet closed
	holding  int                       // of inflight, Hold's: inputs, not jobs
	sampling bool                      // the sampler goroutine runs
	last     Usage                     // the latest sample
	lastGC   time.Time
	stats    Stats
	dev      deviceState // the device budget (device.go)
}

// Config sets up a Governor.
type Config struct {
	Budget int64 // RSS budget in bytes (engine.Options.Memory.Budget); Unlimited admits every job (and still measures)
	Pinned int64 // pinned-memory budget in bytes (engine.Options.Memory.Pinned); 0 allows no pinned pool

	// Measure reads the process's memory; nil means ReadUsage. Tests give
	// their own to make the measured test predictable.
	Measure func() Usage
	// Sample is how often RSS and faults are sampled while jobs are admitted,
	// for their PeakRSS and MinorFaults and to re-check jobs held back by the
	// measured test; 0 means 20 ms (a sample costs about 10 µs).
	Sample time.Duration
	// GoLimit, when set, is told the soft memory limit the Go runtime
	// should have to keep RSS within the budget: the budget less the
	// resident memory that is not the runtime's (the binary, C libraries,
	// pinned buffers), but never below a quarter of the budget. It is
	// called at NewGovernor and again whenever that memory may have
	// changed (Charge, ChargePinned and its release), with the governor's
	// lock held, so calls arrive in order and must not call back into the
	// governor; never under an Unlimited budget. The governor itself
	// leaves the runtime alone: its memory limit and GOGC are the
	// process's, and setting them is its caller's act (the engine does it
	// when asked: engine.MemoryOptions.SetGoLimit).
	GoLimit func(limit int64)
	// Device, when set, adds a device-memory budget (device.go): the
	// governor reads the device's free memory from it, ChargeDevice counts
	// resident keys and AdmitDevice makes jobs wait for device memory.
	Device DeviceMemory
	// DeviceBudget is the device memory keys and jobs may hold; 0 means what
	// the device has free when the governor is made.
	DeviceBudget int64
}

// Stats are the governor's counters.
type Stats struct {
	Budget, PinnedBudget int64

	Charged  int64 // held for the run by resident keys and pinned pools (part of Budget)
	Pinned   int64 // held by pinned pools (part of PinnedBudget and of Charged)
	Reserved int64 // held by admitted jobs now
	Admitted int   // jobs past admission and not yet closed
	Waiting  int   // jobs waiting for admission now

	PeakReserved int64
	PeakAdmitted int           // most jobs past admission at once
	Granted      int64         // admissions so far
	Waits        int64         // admissions that had to wait
	WaitTime     time.Duration // their total wait
	Rejected     int64         // jobs larger than the budget
	Forced       int64         // admitted over the measured test, nothing else being in flight

	RSS, PeakRSS int64 // the latest and highest RSS sampled
	Reusable     int64 // of RSS, at the latest sample

	// The device budget (Config.Device; all zero without one). FormatDevice
	// writes them for a status line.
	DeviceBudget, DeviceTotal int64 // the budget, and the device's memory
	DeviceFree                int64 // free on the device at the latest reading
	DeviceCharged             int64 // held for the run by resident keys
	DeviceReserved            int64 // held by admitted jobs now
	DeviceAdmitted            int   // jobs holding device memory now
	DeviceWaiting             int   // jobs waiting for device memory now
	DevicePeakReserved        int64
	DeviceGranted             int64         // device admissions so far
	DeviceWaits               int64         // device admissions that had to wait
	DeviceWaitTime            time.Duration // their total wait
	DeviceRejected            int64         // jobs larger than the device budget
}

// ErrTooLarge is what a TooLargeError matches with errors.Is.
var ErrTooLarge = errors.New("job larger than the memory budget")

// TooLargeError is a job whose footprint can never fit the budget.
type TooLargeError struct {
	Need     int64 // the job's footprint
	Budget   int64 // the whole RSS budget
	Resident int64 // held by resident keys and pinned pools
}

func (e *TooLargeError) Error() string {
	if e.Resident >= e.Budget {
		return fmt.Sprintf("needs %s of memory, but resident keys and pinned buffers (%s) already fill the %s memory budget (raise mem.Config.Budget)",
			FormatBytes(e.Need), FormatBytes(e.Resident), FormatBytes(e.Budget))
	}
	if e.Resident > 0 {
		return fmt.Sprintf("needs %s of memory, more than the %s left of the %s memory budget beside %s of resident keys and pinned buffers (raise mem.Config.Budget)",
			FormatBytes(e.Need), FormatBytes(e.Budget-e.Resident), FormatBytes(e.Budget), FormatBytes(e.Resident))
	}
	return fmt.Sprintf("needs %s of memory, more than the whole %s memory budget (raise mem.Config.Budget)",
		FormatBytes(e.Need), FormatBytes(e.Budget))
}

func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// waiter is a job waiting for admission.
type waiter struct {
	need  int64
	input bool          // Hold's: an input held, not a job admitted
	ready chan struct{} // closed once res or err is set
	res   *Reservation
	err   error
}

// NewGovernor returns a governor over cfg's budgets. A budget of zero or less
// is a programmer error and panics (ParseBudget refuses it).
func NewGovernor(cfg Config) *Governor {
	if cfg.Budget <= 0 || cfg.Pinned < 0 {
		panic(fmt.Sprintf("mem: budgets of %d and %d bytes", cfg.Budget, cfg.Pinned))
	}
	g := &Governor{
		budget:       cfg.Budget,
		pinnedBudget: cfg.Pinned,
		measure:      cfg.Measure,
		period:       cfg.Sample,
		inflight:     make(map[*Reservation]struct{}),
	}
	if g.measure == nil {
		g.measure = ReadUsage
		g.gc = runtime.GC
	}
	if g.period <= 0 {
		g.period = 20 * time.Millisecond
	}
	g.last = g.measure()
	g.stats.PeakRSS = g.last.RSS
	g.initDevice(cfg)
	if cfg.Budget != Unlimited {
		g.goLimit = cfg.GoLimit
	}
	g.setGoLimitLocked() // no other goroutine has g yet
	return g
}

// Budget is the RSS budget.
func (g *Governor) Budget() int64 { return g.budget }

// Admit blocks until need bytes fit the budget, in arrival order, and returns
// the job's hold on them; the caller must Close it when the job leaves. It
// fails at once with a *TooLargeError when need can never fit, and returns
// ctx.Err() if ctx ends first (a job cancelled after being granted gives its
// bytes straight back).
func (g *Governor) Admit(ctx context.Context, job string, need int64) (*Reservation, error) {
	return g.admit(ctx, need, false)
}

// Hold reserves need bytes of a job's input held in memory before the job
// is admitted (a fleet worker's witness, fetched as parse opens it) as
// Admit does: in the same line, under the same tests, with the same
// errors. It is no admission: it counts in Reserved, not in Admitted,
// Waiting, Granted or Waits, so that a job that held its witness and was
// then admitted counts once. Close the hold once the input is let go.
func (g *Governor) Hold(ctx context.Context, what string, need int64) (*Reservation, error) {
	return g.admit(ctx, need, true)
}

func (g *Governor) admit(ctx context.Context, need int64, input bool) (*Reservation, error) {
	need = max(need, 0)
	g.mu.Lock()
	if g.budget != Unlimited && need > g.budget-g.charged {
		g.stats.Rejected++
		g.mu.Unlock()
		return nil, &TooLargeError{Need: need, Budget: g.budget, Resident: g.charged}
	}
	w := &waiter{need: need, input: input, ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.grantLocked(nil)
	if w.res != nil || w.err != nil {
		g.mu.Unlock()
		return w.res, w.err
	}
	waitTime := &g.stats.WaitTime
	if input {
		waitTime = new(time.Duration) // no job's wait
	} else {
		g.stats.Waits++
	}
	g.mu.Unlock()
	return g.await(ctx, w, &g.queue, waitTime, func() { g.grantLocked(nil) })
}

// await waits, with g.mu not held, until w is granted or ctx ends, adding
// the wait to *waitTime. On cancellation w leaves *queue, or, granted as
// ctx ended, gives its bytes straight back; regrant (called with g.mu held)
// then lets in those w was holding back. Admit and AdmitDevice share it.
func (g *Governor) await(ctx context.Context, w *waiter, queue *[]*waiter, waitTime *time.Duration, regrant func()) (*Reservation, error) {
	start := time.Now()
	select {
	case <-w.ready:
		g.mu.Lock()
		*waitTime += time.Since(start)
		g.mu.Unlock()
		return w.res, w.err
	case <-ctx.Done():
		g.mu.Lock()
		*waitTime += time.Since(start)
		if w.res != nil { // granted as ctx ended
			g.mu.Unlock()
			w.res.Close()
			return nil, ctx.Err()
		}
		for i, x := range *queue {
			if x == w {
				*queue = append((*queue)[:i], (*queue)[i+1:]...)
				break
			}
		}
		regrant() // w may have been holding back those behind it
		g.mu.Unlock()
		return nil, ctx.Err()
	}
}

// grantLocked admits waiters from the head of the queue while they fit. u is
// a fresh reading, or nil to take one if the measured test needs it.
func (g *Governor) grantLocked(u *Usage) {
	for len(g.queue) > 0 {
		w := g.queue[0]
		if g.budget != Unlimited && w.need > g.budget-g.charged {
			// a charge since it queued leaves it no room: fail it, never wait forever
			g.queue[0] = nil
			g.queue = g.queue[1:]
			g.stats.Rejected++
			w.err = &TooLargeError{Need: w.need, Budget: g.budget, Resident: g.charged}
			close(w.ready)
			continue
		}
		ok, byMeasure := g.fitsLocked(w.need, &u)
		if !ok {
			if byMeasure && g.gc != nil && time.Since(g.lastGC) > time.Second {
				g.lastGC = time.Now()
				go g.gc()
			}
			return
		}
		g.queue[0] = nil
		g.queue = g.queue[1:]
		if u == nil {
			v := g.measure()
			u = &v
		}
		w.res = g.admitLocked(w.need, *u, w.input)
		close(w.ready)
	}
}

// fitsLocked applies the promised and measured tests (see Governor) to need;
// byMeasure tells that only the measured one failed. *u is read on first use.
func (g *Governor) fitsLocked(need int64, u **Usage) (ok, byMeasure bool) {
	if g.budget == Unlimited {
		return true, false
	}
	promised := g.charged + g.reserved
	if promised+need > g.budget {
		return false, false
	}
	if *u == nil {
		v := g.measure()
		*u = &v
	}
	rss, reusable := (*u).RSS, (*u).Reusable
	if max(rss, promised+reusable)+max(0, need-reusable) <= g.budget {
		return true, false
	}
	if len(g.inflight) == 0 {
		g.stats.Forced++
		return true, false // nothing admitted: nothing to wait for
	}
	return false, true
}

// admitLocked grants need bytes to a job (an input: Hold), given the
// reading u.
func (g *Governor) admitLocked(need int64, u Usage, input bool) *Reservation {
	g.sampleLocked(u) // closes the interval before this job joins
	r := NewReservation(need, g.give)
	r.input = input
	r.onClose = func(rest int64) { g.closeJob(r, rest) }
	g.reserved += need
	g.inflight[r] = struct{}{}
	s := &g.stats
	if input {
		g.holding++
	} else {
		s.Granted++
	}
	s.PeakAdmitted = max(s.PeakAdmitted, len(g.inflight)-g.holding)
	s.PeakReserved = max(s.PeakReserved, g.reserved)
	r.observe(u.RSS, 0)
	if !g.sampling {
		g.sampling = true
		go g.sampler()
	}
	return r
}

// give takes back bytes a job released early.
func (g *Governor) give(bytes int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reserved -= bytes
	g.grantLocked(nil)
}

// closeJob takes back the rest of r and ends its accounting, in one step, so
// that a job is never admitted into the bytes of one still counted as in.
func (g *Governor) closeJob(r *Reservation, rest int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	u := g.measure()
	g.sampleLocked(u)
	delete(g.inflight, r)
	if r.input {
		g.holding--
	}
	g.reserved -= rest
	g.grantLocked(&u)
}

// sampleLocked records u: the peak RSS, and the faults since the last sample
// split evenly among the jobs admitted now.
func (g *Governor) sampleLocked(u Usage) {
	faults := u.MinorFaults - g.last.MinorFaults
	g.last = u
	g.stats.PeakRSS = max(g.stats.PeakRSS, u.RSS)
	if n := len(g.inflight); n > 0 {
		share := float64(max(faults, 0)) / float64(n)
		for r := range g.inflight {
			r.observe(u.RSS, share)
		}
	}
}

// sampler samples while any job is admitted or waits for device memory, and
// re-checks the queues, since a job held back by a measured test waits on
// RSS or the device's free memory, which change without telling anyone.
func (g *Governor) sampler() {
	t := time.NewTicker(g.period)
	defer t.Stop()
	for range t.C {
		g.mu.Lock()
		if len(g.inflight) == 0 && len(g.dev.queue) == 0 {
			g.sampling = false
			g.mu.Unlock()
			return
		}
		u := g.measure()
		g.sampleLocked(u)
		g.grantLocked(&u)
		g.grantDeviceLocked()
		g.mu.Unlock()
	}
}

// Charge counts bytes that stay resident for the run, such as a circuit's
// proving key, against the budget; what does not fit beside them fails
// admission as too large. Close the returned hold to give them back.
func (g *Governor) Charge(bytes int64) *Reservation {
	bytes = max(bytes, 0)
	u := g.measure()
	g.mu.Lock()
	g.charged += bytes
	g.sampleLocked(u)
	g.setGoLimitLocked() // keys are loaded by now: a good time to measure what is not Go's
	g.mu.Unlock()
	return NewReservation(bytes, func(n int64) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.charged -= n
		g.grantLocked(nil)
	})
}

// ChargePinned counts bytes of pinned host memory against the pinned budget
// and, since pinned pages are resident, against the RSS budget. It fails,
// naming the sizes, when either would be exceeded. Close the returned hold
// once the memory is freed.
func (g *Governor) ChargePinned(bytes int64) (*Reservation, error) {
	bytes = max(bytes, 0)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pinnedBudget != Unlimited && g.pinned+bytes > g.pinnedBudget {
		return nil, fmt.Errorf("pinning %s would exceed the %s pinned budget (%s already pinned; raise mem.Config.Pinned)",
			FormatBytes(bytes), FormatBytes(g.pinnedBudget), FormatBytes(g.pinned))
	}
	if g.budget != Unlimited && g.charged+g.reserved+bytes > g.budget {
		return nil, fmt.Errorf("pinning %s would exceed the %s memory budget (%s already held; raise mem.Config.Budget)",
			FormatBytes(bytes), FormatBytes(g.budget), FormatBytes(g.charged+g.reserved))
	}
	g.pinned += bytes
	g.charged += bytes
	g.setGoLimitLocked()
	return NewReservation(bytes, func(n int64) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.pinned -= n
		g.charged -= n
		g.setGoLimitLocked()
		g.grantLocked(nil)
	}), nil
}

// setGoLimitLocked tells Config.GoLimit the budget less the resident memory
// the Go runtime does not manage: the binary, C libraries and pinned buffers
// (measured as RSS beyond the runtime's own, at least the pinned charge).
// A runtime limited to the whole budget would aim at an RSS above it.
func (g *Governor) setGoLimitLocked() {
	if g.goLimit != nil {
		other := max(g.pinned, g.last.RSS-g.last.Go)
		g.goLimit(max(g.budget-other, g.budget/4))
	}
}

// Stats returns the counters now; RSS and PeakRSS are as of the latest sample.
func (g *Governor) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.stats
	s.Budget, s.PinnedBudget = g.budget, g.pinnedBudget
	s.Charged, s.Pinned, s.Reserved = g.charged, g.pinned, g.reserved
	s.Admitted, s.Waiting = len(g.inflight)-g.holding, 0
	for _, w := range g.queue {
		if !w.input {
			s.Waiting++
		}
	}
	s.RSS, s.Reusable = g.last.RSS, g.last.Reusable
	g.deviceStatsLocked(&s)
	return s
}

// Sample takes a reading now (for a status line between samples) and returns
// the counters with it.
func (g *Governor) Sample() Stats {
	u := g.measure()
	g.mu.Lock()
	g.sampleLocked(u)
	if d := &g.dev; d.dev != nil {
		d.free, d.total = d.dev.DeviceMemory()
	}
	g.mu.Unlock()
	return g.Stats()
}
