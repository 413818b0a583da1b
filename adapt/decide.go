package adapt

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Stage is one stage as a window saw it.
type Stage struct {
	Name    string
	Workers int  // workers it has now
	Max     int  // most it may be given
	Fixed   bool // shaped by the user: never changed
	// MemoryFull: more workers here would only wait for memory (the stage
	// admits jobs, or feeds one that does, and admission has jobs waiting).
	MemoryFull bool
	Busy       float64 // mean workers running a job over the window
	Queued     float64 // mean jobs waiting for it, in its queue or in admission
	Cores      float64 // cores one busy worker uses: the stage's cpu ms / run ms
}

// Window is what one window measured.
type Window struct {
	Stages []Stage // in pipeline order
	Cores  int     // cores the process may use
	Rate   float64 // jobs finished per second
}

// Change is one stage's new worker count and why.
type Change struct {
	Stage    string
	From, To int
	Why      string
}

func (c Change) String() string {
	return fmt.Sprintf("%s %d → %d workers: %s", c.Stage, c.From, c.To, c.Why)
}

// The rule's thresholds.
const (
	// A stage limits the stream when its workers are this busy and jobs
	// wait for it: the stages before it then wait to hand jobs over (their
	// workers are not busy), and those after it wait for jobs.
	Saturated = 0.85
	Backlog   = 0.5 // mean jobs waiting that count as a queue
	// A growth stays only if the next window's rate is this much higher;
	// GPU stages behind one compute lock, or cores already full, give none.
	Gain = 1.05
	// A stage gives up a worker only if, with one fewer, its workers would
	// be at most this busy.
	SpareBusy = 0.75
	// Windows during which a worker count that brought no gain is not tried
	// again (the load may change: other circuits, other witnesses).
	HoldWindows = 30
)

// Decision is what one window calls for.
type Decision struct {
	Changes []Change // applied in order: idle stages give workers first
	// Kept, when the bottleneck keeps its workers, says which it is and
	// why: set by the user, at its most, memory full, held, cores full.
	Kept string
}

// Memory is what Decide carries from one window to the next; its zero value
// is the start of a run.
type Memory struct {
	window int
	trial  *Change // the last growth, judged by the next window
	before float64 // the rate of the window that chose it
	cap    map[string]limit
}

type limit struct{ workers, until int }

// Decide returns what one window calls for, at most one growth, and what
// to remember for the next window. Call it once per window, with
// windows long enough that Rate counts several jobs.
//
//  1. A growth chosen last window that did not raise Rate by Gain is
//     undone, and that stage is held below the count for HoldWindows.
//  2. Otherwise the bottleneck (the stage of busiest workers among those
//     Saturated and with a Backlog) gets one more worker, unless it is
//     Fixed, at its Max or held, or memory is full in front of it.
//  3. Its workers must fit the cores: Σ workers × cores per busy worker,
//     after the growth, at most Cores. When they do not, idle workers of
//     other stages go first (the idlest stage first, one worker each);
//     when that is not enough, nothing changes.
func Decide(m Memory, w Window) (Memory, Decision) {
	m.window++
	m.cap = maps.Clone(m.cap) // the caller's Memory stays as it was
	for name, l := range m.cap {
		if l.until < m.window {
			delete(m.cap, name)
		}
	}
	if t := m.trial; t != nil {
		m.trial = nil
		if s, ok := find(w.Stages, t.Stage); ok && !s.Fixed && s.Workers == t.To && w.Rate < m.before*Gain {
			if m.cap == nil {
				m.cap = map[string]limit{}
			}
			m.cap[t.Stage] = limit{workers: t.From, until: m.window + HoldWindows}
			return m, Decision{Changes: []Change{{Stage: t.Stage, From: t.To, To: t.From,
				Why: fmt.Sprintf("the added worker brought no gain (%.2f jobs/s before, %.2f after)", m.before, w.Rate)}}}
		}
	}
	b, ok := bottleneck(w.Stages)
	if !ok {
		return m, Decision{}
	}
	s := w.Stages[b]
	kept := func(why string) (Memory, Decision) {
		return m, Decision{Kept: fmt.Sprintf("%s is the bottleneck (%.0f%% of its %d workers busy, %.1f jobs waiting) and keeps its workers: %s",
			s.Name, 100*share(s), s.Workers, s.Queued, why)}
	}
	l, held := m.cap[s.Name]
	switch {
	case s.Fixed:
		return kept("its shape is the user's")
	case s.Workers >= s.Max:
		return kept(fmt.Sprintf("%d is its most", s.Max))
	case s.MemoryFull:
		return kept("jobs wait for memory")
	case held && s.Workers >= l.workers:
		return kept(fmt.Sprintf("%d workers brought no gain a while ago", l.workers+1))
	}
	demand := 0.0
	for _, st := range w.Stages {
		demand += float64(st.Workers) * st.Cores
	}
	var changes []Change
	for _, d := range donors(w.Stages, b) {
		if demand+s.Cores <= float64(w.Cores)+1e-9 {
			break
		}
		changes = append(changes, Change{Stage: d.Name, From: d.Workers, To: d.Workers - 1,
			Why: fmt.Sprintf("idle (%.1f of %d workers busy), its cores go to %s", d.Busy, d.Workers, s.Name)})
		demand -= d.Cores
	}
	if demand+s.Cores > float64(w.Cores)+1e-9 {
		return kept(fmt.Sprintf("the %d cores are spoken for", w.Cores))
	}
	grow := Change{Stage: s.Name, From: s.Workers, To: s.Workers + 1,
		Why: fmt.Sprintf("the bottleneck (%.0f%% of its workers busy, %.1f jobs waiting; %.2f jobs/s)", 100*s.Busy/float64(s.Workers), s.Queued, w.Rate)}
	m.trial, m.before = &grow, w.Rate
	return m, Decision{Changes: append(changes, grow)}
}

// bottleneck is the index of the stage limiting the stream, if one is.
func bottleneck(stages []Stage) (int, bool) {
	best, found := 0, false
	for i, s := range stages {
		if s.Workers < 1 || s.Busy < Saturated*float64(s.Workers) || s.Queued < Backlog {
			continue
		}
		if !found || share(s) > share(stages[best]) || (share(s) == share(stages[best]) && s.Queued > stages[best].Queued) {
			best, found = i, true
		}
	}
	return best, found
}

func share(s Stage) float64 { return s.Busy / float64(s.Workers) }

// donors are the stages that can give up a worker without becoming busy,
// the most idle cores first; stages of no measurable CPU free nothing. A
// queue does not stop a donor: before the bottleneck, jobs queue because
// they cannot be handed on, while the workers idle.
func donors(stages []Stage, except int) []Stage {
	var out []Stage
	for i, s := range stages {
		if i == except || s.Fixed || s.Workers < 2 || s.Cores < 0.05 ||
			s.Busy > SpareBusy*float64(s.Workers-1) {
			continue
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Stage) int {
		return cmp.Compare((float64(b.Workers)-b.Busy)*b.Cores, (float64(a.Workers)-a.Busy)*a.Cores)
	})
	return out
}

func find(stages []Stage, name string) (Stage, bool) {
	for _, s := range stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}
