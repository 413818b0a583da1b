package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zkpipe/zkpipe/adapt"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// growable is the most workers each stage zkpipe shaped may reach while it
// runs: up to one per core (never fewer than it starts with). Stages the
// user shaped are left out, so nothing ever changes them; nil when the
// shape is fixed.
func growable(o *Options, auto map[string]bool, cores int) map[string]int {
	if o.FixedShape {
		return nil
	}
	out := map[string]int{}
	for _, n := range stages.Names {
		if auto[n] {
			out[n] = max(o.shape(n).Workers, min(cores, MaxWorkers))
		}
	}
	return out
}

// shapeNotes puts the shape in force on the first result line of a run and
// on the first after each change, with what changed and why.
type shapeNotes struct {
	mu      sync.Mutex
	told    bool
	changes []string
}

func (n *shapeNotes) changed(c adapt.Change) {
	n.mu.Lock()
	n.changes = append(n.changes, c.String())
	n.mu.Unlock()
}

// note adds the shape to line when it is due; shape is asked only then.
func (n *shapeNotes) note(line *stream.Result, shape func() string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.told && len(n.changes) == 0 {
		return
	}
	line.Shape, line.ShapeChanges = shape(), n.changes
	n.told, n.changes = true, nil
}

// startAdapting runs the shape controller over the engine's pipeline until
// the returned stop is called; with a fixed shape it does nothing.
func (e *Engine) startAdapting(ctx context.Context) (observe func(stream.Result), stop func()) {
	if e.maxWorkers == nil {
		return func(stream.Result) {}, func() {}
	}
	e.mu.Lock()
	p := e.pipe
	e.mu.Unlock()
	ctrl := adapt.New(p, adapt.Config{Cores: e.cores, Max: e.maxWorkers, Every: e.opts.AdaptEvery,
		MemoryFull: e.memoryFull,
		OnChange: func(c adapt.Change) {
			e.notes.changed(c)
			fmt.Fprintf(e.log, "zkpipe: shape %s\n", c)
		},
		OnKept: func(why string) { fmt.Fprintf(e.log, "zkpipe: shape kept: %s\n", why) },
	})
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { ctrl.Run(ctx) })
	observe = func(r stream.Result) {
		if r.Error != "" {
			return // a failed job's times say nothing of the stages' pace
		}
		runs := make([]adapt.Run, 0, len(r.Stages))
		for _, s := range r.Stages {
			runs = append(runs, adapt.Run{Stage: s.Stage, Busy: ms(s.RunMS), CPU: ms(s.CPUMS)})
		}
		ctrl.Observe(runs)
	}
	return observe, func() { cancel(); wg.Wait() }
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// memoryFull tells whether more workers of stage would only wait for
// memory: jobs wait for admission in front of synthesize (parse feeds it),
// or for device memory in front of transfer.
func (e *Engine) memoryFull(stage string) bool {
	switch stage {
	case stages.Parse, stages.Synthesize:
		return e.gov.Stats().Waiting > 0
	case stages.Transfer:
		return e.gov.Stats().DeviceWaiting > 0
	}
	return false
}

// shapeNow is the shape in force: each stage's workers now (the
// controller's changes included) and queue, * where zkpipe chose.
func (e *Engine) shapeNow() string {
	workers := map[string]int{}
	e.mu.Lock()
	p := e.pipe
	e.mu.Unlock()
	if p != nil {
		for _, s := range p.Snapshot() {
			workers[s.Name] = s.Workers
		}
	}
	return shapeText(&e.opts, e.autoStages, workers)
}

// shapeText is "parse 2/2* synthesize 7/1* …": workers/queue per stage,
// the workers of running (when given) over those opts start with.
func shapeText(o *Options, auto map[string]bool, running map[string]int) string {
	var b strings.Builder
	for i, n := range stages.Names {
		s := o.shape(n)
		if w, ok := running[n]; ok {
			s.Workers = w
		}
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s %d/%d", n, s.Workers, s.Queue)
		if auto[n] {
			b.WriteString("*")
		}
	}
	return b.String()
}
