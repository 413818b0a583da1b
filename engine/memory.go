package engine

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/stages"
)

// startPinned allocates the pinned pool of a backend that stages through
// buffers lent to it (stages.Backend.PinnedSlots); nil, nil for the others.
func startPinned(g *mem.Governor, b stages.Backend) (*mem.PinnedPool, error) {
	slot, slots := b.PinnedSlots()
	if slot <= 0 || slots <= 0 {
		return nil, nil
	}
	if budget := g.Stats().PinnedBudget; budget != mem.Unlimited {
		slots = min(slots, int((budget-g.Stats().Pinned)/int64(slot)))
		if slots < 1 {
			return nil, fmt.Errorf("engine.Options.Memory.Pinned %s holds no %s staging buffer of the %s backend", mem.FormatBytes(budget), mem.FormatBytes(int64(slot)), b.Name())
		}
	}
	p, err := mem.NewPinnedPool(g, b.PinnedAlloc, slot, slots)
	if err != nil {
		return nil, fmt.Errorf("%s backend: %w", b.Name(), err)
	}
	b.UsePinned(p)
	return p, nil
}

// governorConfig reads the budgets into the governor's configuration.
func governorConfig(o MemoryOptions, machine mem.Machine) (mem.Config, error) {
	if o.Budget == "" {
		o.Budget = "75%"
	}
	if o.Pinned == "" {
		o.Pinned = "25%"
	}
	budget, err := mem.ParseBudget(o.Budget, machine.Limit)
	if err != nil {
		return mem.Config{}, fmt.Errorf("engine.Options.Memory.Budget: %w", err)
	}
	// A pinned share is of the RSS budget, which pinned memory is part of.
	pinnedOf := budget
	if budget == mem.Unlimited {
		pinnedOf = machine.Limit
	}
	pinned, err := mem.ParseBudget(o.Pinned, pinnedOf)
	if err != nil {
		return mem.Config{}, fmt.Errorf("engine.Options.Memory.Pinned: %w", err)
	}
	if budget != mem.Unlimited && pinned != mem.Unlimited && pinned > budget {
		return mem.Config{}, fmt.Errorf("engine.Options.Memory.Pinned %s is more than engine.Options.Memory.Budget %s: pinned memory is resident, so it counts against both",
			mem.FormatBytes(pinned), mem.FormatBytes(budget))
	}
	cfg := mem.Config{Budget: budget, Pinned: pinned}
	if o.Device != "" {
		// A size only: a share would be of a device not yet opened.
		d, err := mem.ParseBudget(o.Device, 0)
		if err != nil || d == mem.Unlimited || d <= 0 {
			return mem.Config{}, fmt.Errorf("engine.Options.Memory.Device %q: want a size such as 80GiB (unset: the GPU's free memory at start)", o.Device)
		}
		cfg.DeviceBudget = d
	}
	return cfg, nil
}

// BudgetGCPercent is the GOGC the zkpipe command gives MemoryOptions.GCPercent
// unless GOGC is set in its environment. Measured on mulchain 2^16 under a
// budget for three jobs: GOGC=50 halved the minor faults of steady-state
// proofs and kept peak RSS 20% further under the budget than the default
// 100 (notes/mem.md). Collecting earlier than the memory limit forces keeps
// the runtime from returning pages to the OS only for the next proof to
// fault them in again.
const BudgetGCPercent = 50

// goRuntime is what New changed in the Go runtime's process-wide settings
// (MemoryOptions.SetGoLimit, GCPercent), for Close to put back.
type goRuntime struct {
	limit0   int64 // the memory limit before, when limitSet
	gc0      int   // GOGC before, when gcSet
	limitSet bool
	gcSet    bool
}

// setGoRuntime applies o's Go runtime settings under cfg's budget: GOGC now,
// and the memory limit through the governor's reports (mem.Config.GoLimit)
// from NewGovernor on. Under no budget it changes nothing.
func setGoRuntime(o MemoryOptions, cfg *mem.Config) *goRuntime {
	r := &goRuntime{}
	if cfg.Budget == mem.Unlimited {
		return r
	}
	if o.SetGoLimit {
		r.limit0, r.limitSet = debug.SetMemoryLimit(-1), true
		cfg.GoLimit = func(limit int64) { debug.SetMemoryLimit(limit) }
	}
	if o.GCPercent > 0 {
		r.gc0, r.gcSet = debug.SetGCPercent(o.GCPercent), true
	}
	return r
}

// restore puts back what setGoRuntime changed; nil restores nothing.
func (r *goRuntime) restore() {
	if r == nil {
		return
	}
	if r.limitSet {
		debug.SetMemoryLimit(r.limit0)
	}
	if r.gcSet {
		debug.SetGCPercent(r.gc0)
	}
}

// chargeResident charges what is resident before the first job (the keys
// made resident, the sources' copies of them such as gnark's R1CS, the
// runtime and the binary) as the floor every job stands on: the largest of
// the memory in use then, after a collection (RSS less what is reusable),
// what the Go runtime holds beside its free heap (mem.Usage.GoHeld), and an
// estimate of the keys and sources alone (residentBytes).
//
// GoHeld is there because RSS − Reusable alone can miss the live heap
// whole: Reusable counts the free heap, and a freed object whose pages were
// never touched is free heap that was never resident (a Go program that
// keeps 512 MiB and frees 1 GiB it never wrote reads RSS 516 MiB, free heap
// 1024 MiB: RSS − free −508 MiB). On the H200, bits 2^26 on gpu.CUDA after
// its key load (peak 34.1 GiB) charged 855 MiB: the pinned buffers and the
// selections (keyBytes), none of its R1CS's live ~5 GiB (84.5 B a
// constraint, measured at 2^16 and 2^18); two 8.06 GiB jobs were admitted
// under an 18 GiB budget beside it and RSS reached 21.2 GiB.
//
// Pinned memory is resident, and already charged when it was pinned (the
// backend's bounce buffers, a key's bases streamed from the host: 44 GiB
// for a 2^27 porep key, which counted twice left no room for a job under a
// 124 GiB budget on the H100 host): RSS less that.
func chargeResident(g *mem.Governor, circuits []*stages.Circuit) *mem.Reservation {
	runtime.GC() // what loading left behind is not resident state
	u := mem.ReadUsage()
	var keys int64
	for _, c := range circuits {
		keys += residentBytes(c)
	}
	return g.Charge(residentCharge(u, g.Stats().Pinned, keys))
}

// residentCharge is what chargeResident charges: the memory in use after
// loading less what is reusable and what is charged already as pinned, at
// least the runtime's held heap and the keys' estimate.
func residentCharge(u mem.Usage, pinned, keys int64) int64 {
	return max(u.RSS-u.Reusable-pinned, u.GoHeld, keys)
}

// residentBytes is the host memory a loaded circuit keeps for the run, as
// estimated from its sizes: its key's (keyBytes) and its source's (gnark's
// R1CS: stages.Source.HostBytes). A circuit added while jobs run is
// charged this, since no measure then tells it from theirs.
func residentBytes(c *stages.Circuit) int64 {
	return keyBytes(c) + c.Source.HostBytes()
}

// warnTooLarge says when a circuit's job cannot fit beside what is resident.
func (e *Engine) warnTooLarge(circuits []*stages.Circuit) {
	b := e.gov.Budget()
	if b == mem.Unlimited {
		return
	}
	for _, c := range circuits {
		if room := b - e.gov.Stats().Charged; c.Footprint() > room {
			fmt.Fprintf(e.log, "zkpipe: warning: a job of %s needs %s, but the %s memory budget leaves %s beside what is resident; its jobs will fail (raise engine.Options.Memory.Budget)\n",
				c.Name, mem.FormatBytes(c.Footprint()), mem.FormatBytes(b), mem.FormatBytes(max(room, 0)))
		}
	}
}

// keyBytes is the host memory of a circuit's resident key: the parts of
// its host copy still held (proofdata.Key.HostBytes: none of the bases on
// a GPU, which holds them) and the selections (4 B a scalar).
func keyBytes(c *stages.Circuit) int64 {
	return c.Key.HostBytes() + int64(len(c.Sel.A)+len(c.Sel.B)+len(c.Sel.K))*4
}
