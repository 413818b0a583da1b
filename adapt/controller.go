package adapt

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/zkpipe/zkpipe/pipeline"
)

// Target is the pipeline a Controller reshapes; *pipeline.Pipeline is one.
type Target interface {
	Snapshot() []pipeline.StageCount
	SetWorkers(stage string, n int) error
}

// Config is what a Controller may do and how often it looks.
type Config struct {
	Cores int // cores the process may use
	// Max is the most workers each stage may be given. A stage missing
	// here is fixed: the user shaped it, and it keeps its workers.
	Max map[string]int
	// Every is the least length of a window (0: 2 s); a window also waits
	// for MinJobs finished jobs (0: 10), so that its rate means something.
	Every   time.Duration
	MinJobs int
	// MemoryFull tells whether more workers of a stage would only wait for
	// memory now; asked at every sample, and a window counts it full when
	// most samples were. nil: never.
	MemoryFull func(stage string) bool
	// OnChange hears of each change once it is applied, and OnKept of a
	// bottleneck that keeps its workers (Decision.Kept) when that is news,
	// both from the controller's goroutine.
	OnChange func(Change)
	OnKept   func(string)
}

// Run is one stage's part of one finished job, for Observe.
type Run struct {
	Stage     string
	Busy, CPU time.Duration
}

// Controller samples a running pipeline and applies Decide's changes.
type Controller struct {
	target Target
	cfg    Config

	mu       sync.Mutex // guards the jobs' sums: Observe comes from the sink
	jobs     int
	busy     map[string]time.Duration
	cpu      map[string]time.Duration
	perBusy  map[string]float64 // cores a busy worker used, last measured
	memory   Memory
	kept     string // the last Decision.Kept told, less its figures
	windows  int    // windows ended so far
	samples  int
	running  map[string]float64
	queued   map[string]float64
	fullSeen map[string]int
}

// New returns a controller of t; Run starts it.
func New(t Target, cfg Config) *Controller {
	if cfg.Every <= 0 {
		cfg.Every = 2 * time.Second
	}
	if cfg.MinJobs <= 0 {
		cfg.MinJobs = 10
	}
	return &Controller{target: t, cfg: cfg, busy: map[string]time.Duration{}, cpu: map[string]time.Duration{},
		perBusy: map[string]float64{}}
}

// Observe records a finished job's stage runs. Safe from any goroutine.
func (c *Controller) Observe(runs []Run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jobs++
	for _, r := range runs {
		c.busy[r.Stage] += r.Busy
		c.cpu[r.Stage] += r.CPU
	}
}

// Run samples the target twenty times a window (every 1 to 100 ms) and
// decides at the end of each window but the first, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	every := min(max(c.cfg.Every/20, time.Millisecond), 100*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	c.reset()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		snap := c.target.Snapshot()
		c.sample(snap)
		elapsed := time.Since(start)
		if elapsed < c.cfg.Every || c.finished() < c.cfg.MinJobs {
			continue
		}
		w := c.window(snap, elapsed)
		if warm := c.windows > 0; !warm {
			// The first window holds the pipeline filling up: its rate
			// is no baseline for judging a growth.
			c.windows++
			c.reset()
			start = time.Now()
			continue
		}
		c.windows++
		var d Decision
		c.memory, d = Decide(c.memory, w)
		c.tellKept(d.Kept)
		for _, ch := range d.Changes {
			if ctx.Err() != nil || c.target.SetWorkers(ch.Stage, ch.To) != nil {
				break // the run is ending: its stages keep what they have
			}
			if c.cfg.OnChange != nil {
				c.cfg.OnChange(ch)
			}
		}
		c.reset()
		start = time.Now()
	}
}

func (c *Controller) finished() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.jobs
}

func (c *Controller) reset() {
	c.mu.Lock()
	c.jobs = 0
	clear(c.busy)
	clear(c.cpu)
	c.mu.Unlock()
	c.samples = 0
	c.running, c.queued, c.fullSeen = map[string]float64{}, map[string]float64{}, map[string]int{}
}

func (c *Controller) sample(snap []pipeline.StageCount) {
	c.samples++
	for _, s := range snap {
		c.running[s.Name] += float64(s.Busy) // workers, not jobs: a batch is one busy worker
		c.queued[s.Name] += float64(s.Queued)
		if c.cfg.MemoryFull != nil && c.cfg.MemoryFull(s.Name) {
			c.fullSeen[s.Name]++
		}
	}
}

// window turns the samples and the jobs' sums into Decide's input; last is
// the latest snapshot, whose worker counts are those in force.
func (c *Controller) window(last []pipeline.StageCount, elapsed time.Duration) Window {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := Window{Cores: c.cfg.Cores, Rate: float64(c.jobs) / elapsed.Seconds()}
	n := float64(max(c.samples, 1))
	for _, s := range last {
		if b := c.busy[s.Name]; b > 0 {
			c.perBusy[s.Name] = min(c.cpu[s.Name].Seconds()/b.Seconds(), float64(c.cfg.Cores))
		}
		perBusy, known := c.perBusy[s.Name]
		if !known {
			perBusy = 1 // nothing measured yet: a worker is taken to use a core
		}
		max, free := c.cfg.Max[s.Name]
		w.Stages = append(w.Stages, Stage{
			Name: s.Name, Workers: s.Workers, Max: max, Fixed: !free,
			MemoryFull: 2*c.fullSeen[s.Name] > c.samples,
			Busy:       c.running[s.Name] / n, Queued: c.queued[s.Name] / n, Cores: perBusy,
		})
	}
	return w
}

// tellKept passes kept on when its stage or reason differs from the last
// told: a bottleneck held for an hour is said once, not every window.
func (c *Controller) tellKept(kept string) {
	key := kept
	if i, j := strings.Index(kept, " ("), strings.Index(kept, ")"); i >= 0 && j > i {
		key = kept[:i] + kept[j+1:]
	}
	if key == c.kept {
		return
	}
	c.kept = key
	if kept != "" && c.cfg.OnKept != nil {
		c.cfg.OnKept(kept)
	}
}
