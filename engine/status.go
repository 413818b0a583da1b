package engine

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/stages"
)

// statusTicker prints the engine's status line every so often until stop:
// at each tick while jobs are in flight, when anything moved since the
// last line printed (the proofs, the stages' jobs and workers, the jobs
// admitted or waiting for memory), and otherwise once a quiet interval
// (a minute) has passed: an idle service says it is alive without a line
// a second.
type statusTicker struct {
	out   io.Writer
	every time.Duration
	line  func() string
	// state is what moves (a key of the counts that matter) and whether
	// jobs are in flight
	state func() (key string, busy bool)

	quit chan struct{}
	wg   sync.WaitGroup
}

// statusQuiet is the longest an idle engine goes without a status line.
const statusQuiet = time.Minute

// start prints a line every t.every (at least a second) until stop, as
// statusTicker says; a zero interval prints nothing.
func (t *statusTicker) start() {
	if t.every <= 0 || t.quit != nil {
		return
	}
	t.every = max(t.every, time.Second)
	t.quit = make(chan struct{})
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(t.every)
		defer tick.Stop()
		var last statusPrinted
		for {
			select {
			case now := <-tick.C:
				key, busy := t.state()
				if last.due(now, key, busy) {
					fmt.Fprintln(t.out, t.line())
					last = statusPrinted{at: now, key: key, any: true}
				}
			case <-t.quit:
				return
			}
		}
	}()
}

// statusPrinted is the last status line printed: when, and what moved then.
type statusPrinted struct {
	at  time.Time
	key string
	any bool // a line was printed
}

// due says whether a tick at now prints: the first one, any while jobs are
// in flight, one that sees something moved, and one statusQuiet after the
// last line.
func (p statusPrinted) due(now time.Time, key string, busy bool) bool {
	return !p.any || busy || key != p.key || now.Sub(p.at) >= statusQuiet
}

// stop ends the ticker and prints a last line.
func (t *statusTicker) stop() {
	if t.quit == nil {
		return
	}
	close(t.quit)
	t.wg.Wait()
	fmt.Fprintln(t.out, t.line())
	t.quit = nil
}

// statusState is what moves on the status line (the proofs, each stage's
// queued and running jobs and its workers, the jobs admitted and waiting
// for memory or the device), leaving out the clock, the rate and the
// memory readings, which change while nothing happens; busy: jobs are in
// the stages or admitted.
func statusState(proved, failed int64, stages []pipeline.StageCount, m mem.Stats) (key string, busy bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d", proved, failed)
	for _, st := range stages {
		fmt.Fprintf(&b, " %d+%d/%d", st.Queued, st.Running, st.Workers)
		busy = busy || st.Queued+st.Running > 0
	}
	fmt.Fprintf(&b, " %d %d %d %d %d", m.Admitted, m.Waiting, m.Granted, m.DeviceAdmitted, m.DeviceWaiting)
	busy = busy || m.Admitted+m.Waiting+m.DeviceAdmitted+m.DeviceWaiting > 0
	return b.String(), busy
}

// statusLine is, for example:
//
//	zkpipe: 37 proofs (1 failed) in 15s, 2.47/s | parse 0+1/2 synthesize 1+6/7 … assemble 0+0/2 | rss 3.20 GiB/12.0 GiB (peak 3.51 GiB), 512 MiB reusable, resident 1.20 GiB, 2 jobs in (2.10 GiB), 1 waiting | pinned 128 MiB/4.00 GiB
//
// where each stage shows its queued+running jobs and its workers now (the
// shape controller may change them).
func statusLine(proved, failed int64, elapsed time.Duration, stages []pipeline.StageCount, m mem.Stats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "zkpipe: %d proofs", proved)
	if failed > 0 {
		fmt.Fprintf(&b, " (%d failed)", failed)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(proved) / elapsed.Seconds()
	}
	fmt.Fprintf(&b, " in %s, %.2f/s |", elapsed.Round(time.Second), rate)
	for _, st := range stages {
		fmt.Fprintf(&b, " %s %d+%d", st.Name, st.Queued, st.Running)
		if st.Workers > 0 {
			fmt.Fprintf(&b, "/%d", st.Workers)
		}
	}
	fmt.Fprintf(&b, " | rss %s/%s (peak %s)", mem.FormatBytes(m.RSS), mem.FormatBytes(m.Budget), mem.FormatBytes(m.PeakRSS))
	if m.Reusable > 0 {
		// of rss: idle pooled buffers and free Go heap, which the governor
		// lets the next jobs draw on; rss − reusable is what resident and
		// the jobs' reservations must cover
		fmt.Fprintf(&b, ", %s reusable", mem.FormatBytes(m.Reusable))
	}
	fmt.Fprintf(&b, ", resident %s, %d jobs in (%s)", mem.FormatBytes(m.Charged), m.Admitted, mem.FormatBytes(m.Reserved))
	if m.Waiting > 0 {
		fmt.Fprintf(&b, ", %d waiting", m.Waiting)
	}
	if m.Pinned > 0 { // only a backend that stages through page-locked buffers pins; on CPU alone "pinned 0 B" says nothing
		fmt.Fprintf(&b, " | pinned %s/%s", mem.FormatBytes(m.Pinned), mem.FormatBytes(m.PinnedBudget))
	}
	if d := mem.FormatDevice(m); d != "" {
		fmt.Fprintf(&b, " | %s", d)
	}
	fmt.Fprintf(&b, " | admitted %d, at most %d at once; %d waited (%s)", m.Granted, m.PeakAdmitted, m.Waits, m.WaitTime.Round(time.Millisecond))
	if m.Forced > 0 {
		fmt.Fprintf(&b, ", %d let in over measured RSS", m.Forced)
	}
	if m.Rejected > 0 {
		fmt.Fprintf(&b, ", %d too large", m.Rejected)
	}
	return b.String()
}

// startLine says what the budgets came to and how many jobs fit, e.g.
//
//	zkpipe: memory budget 12.0 GiB (machine 15.6 GiB, cgroup none), pinned 3.00 GiB; resident at start 3.20 GiB; a job of mulchain reserves 1.46 GiB (5 fit)
//
// (", pinned …" only when a backend pins).
func startLine(m mem.Stats, machine mem.Machine, circuits []*stages.Circuit) string {
	var b strings.Builder
	cg := "none"
	if machine.Cgroup > 0 {
		cg = mem.FormatBytes(machine.Cgroup)
	}
	fmt.Fprintf(&b, "zkpipe: memory budget %s (machine %s, cgroup %s)", mem.FormatBytes(m.Budget), mem.FormatBytes(machine.Total), cg)
	if m.Pinned > 0 { // as on the status line: only a backend that pins has a pinned budget to speak of
		fmt.Fprintf(&b, ", pinned %s", mem.FormatBytes(m.PinnedBudget))
	}
	fmt.Fprintf(&b, "; resident at start %s", mem.FormatBytes(m.Charged))
	for _, c := range circuits {
		f := c.Footprint()
		fmt.Fprintf(&b, "; a job of %s reserves %s", c.Name, mem.FormatBytes(f))
		if m.Budget != mem.Unlimited && f > 0 {
			fmt.Fprintf(&b, " (%d fit)", max(m.Budget-m.Charged, 0)/f)
		}
	}
	return b.String()
}

// shapeLine says which shape is in force, e.g.
//
//	zkpipe: shape parse 2/2* synthesize 4/1 … (workers/queue; * chosen by zkpipe …)
func shapeLine(o *Options, auto map[string]bool) string {
	how := "and adapted while it runs"
	if o.FixedShape {
		how = "and kept (engine.Options.FixedShape)"
	}
	return fmt.Sprintf("zkpipe: shape %s (workers/queue; * chosen by zkpipe from the cores and devices %s, the rest set by flags)",
		shapeText(o, auto, nil), how)
}

// sharesLine is each GPU's count of jobs and whether it is out of rotation,
// e.g. "gpus cuda:0 41, cuda:1 40 (out)".
func sharesLine(m *gpu.Multi) string {
	var b strings.Builder
	b.WriteString("gpus")
	jobs, up := m.Share()
	for i, name := range m.Devices() {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %d", name, jobs[i])
		if !up[i] {
			b.WriteString(" (out)")
		}
	}
	return b.String()
}
