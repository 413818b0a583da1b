package engine

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/zkpipe/zkpipe/stream"
)

// goSettings reads the Go runtime's memory limit and GOGC without changing
// them.
func goSettings() (limit int64, gc int) {
	limit = debug.SetMemoryLimit(-1)
	gc = debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	return limit, gc
}

// The memory limit and GOGC are the process's: an engine made with the
// default options leaves them as they were, under a budget or not; one
// asked to (MemoryOptions.SetGoLimit, GCPercent, as the zkpipe command
// asks) sets them while it is open, the limit within the budget, and
// Close puts both back.
func TestEngineSetsTheGoRuntimeOnlyWhenAsked(t *testing.T) {
	limit0, gc0 := goSettings()
	const gc = 37 // neither the default nor BudgetGCPercent
	if gc0 == gc {
		t.Fatalf("GOGC is %d already", gc)
	}
	open := func(m MemoryOptions) (limit int64, gcPercent int) {
		t.Helper()
		o := cpuOptions(t.TempDir())
		o.Memory = m
		e, err := New(context.Background(), o, loadChain(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Run(context.Background(), generated("g", 1), func(r stream.Result) error {
			if r.Error != "" {
				t.Errorf("job %s: %s", r.ID, r.Error)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		limit, gcPercent = goSettings()
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if l, g := goSettings(); l != limit0 || g != gc0 {
			t.Errorf("%+v: after Close the limit is %d and GOGC %d, want %d and %d back", m, l, g, limit0, gc0)
		}
		return limit, gcPercent
	}

	for _, m := range []MemoryOptions{{Budget: "1GiB"}, {Budget: "off", SetGoLimit: true, GCPercent: gc}} {
		if l, g := open(m); l != limit0 || g != gc0 {
			t.Errorf("%+v: the open engine set the limit to %d and GOGC to %d (were %d and %d)", m, l, g, limit0, gc0)
		}
	}
	l, g := open(MemoryOptions{Budget: "1GiB", SetGoLimit: true, GCPercent: gc})
	if l == limit0 || l > 1<<30 || l < 1<<30/4 {
		t.Errorf("Go memory limit %d under a 1 GiB budget (was %d), want the budget less what is not Go's", l, limit0)
	}
	if g != gc {
		t.Errorf("GOGC %d while open, want %d", g, gc)
	}
}
