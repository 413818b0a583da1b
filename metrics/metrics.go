// Package metrics exports zkpipe's Prometheus metrics: proofs by circuit and
// outcome, each stage's run and queue times (from the result lines, so the
// stage names are those of the flags, the result lines and the spans), the
// jobs in each stage, memory against its budgets, admission waits, the
// compute device's busy time, a fleet worker's jobs in hand and its queue's
// backlog; each only
// where the process produces it (Options), and zkpipe_build_info always.
// Serve puts them on /metrics beside /healthz.
//
// Every name here appears in metrics/grafana/zkpipe.json, whose queries a
// test checks against a real scrape.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Options say where the scrape-time figures come from; each may be nil, and
// what is nil is not exported at all: a series that stays zero because the
// process cannot produce it reads as "nothing happened", which misleads.
type Options struct {
	// Engine is the engine's state at scrape time (engine.Engine.Snapshot).
	// Set, the process proves: the proof, stage, memory and device metrics
	// are exported.
	Engine func() engine.Snapshot
	// Fleet is a fleet worker's jobs in hand and the most it holds. Set,
	// the process is a fleet worker: the zkpipe_fleet_ metrics are exported.
	Fleet func() (inHand, capacity int)
	// Backlog is the fleet queue's jobs waiting for a worker, by priority
	// (fleet.Queue.Backlog), read at each scrape. Set, the
	// zkpipe_fleet_backlog_jobs gauge is exported; a failed read leaves it
	// out of that scrape (no stale figure).
	Backlog func() (map[string]int, error)
	// Circuit reports whether a circuit is one this process has loaded
	// (engine.Engine.HasCircuit): only those get a circuit label of their
	// own, every other name "other". Nil: the first MaxCircuitLabels names
	// seen get one.
	Circuit func(name string) bool
	// DeviceStages are the stages that run on the compute device; nil means
	// pin/transfer, NTT+MSM_H, batch-addition and tail-MSM.
	DeviceStages []string
}

// Metrics holds zkpipe's collectors in their own registry.
type Metrics struct {
	reg *prometheus.Registry
	o   Options

	proofs     *prometheus.CounterVec
	jobSeconds *prometheus.HistogramVec
	run, queue *prometheus.HistogramVec
	fleetJobs  *prometheus.CounterVec
	fleetWait  prometheus.Histogram
	busy       *prometheus.CounterVec

	mu       sync.Mutex
	circuits map[string]bool       // circuit labels given out
	devices  map[string]*busyUnion // by device name
	device   map[string]bool       // stage → runs on the device
	known    map[string]bool       // the stage names
}

// MaxCircuitLabels bounds the circuit labels when Options.Circuit is nil.
const MaxCircuitLabels = 32

// OtherCircuit is the label of every circuit that gets none of its own.
const OtherCircuit = "other"

// circuitLabel bounds the label set: a job line names any circuit it likes
// (one per job would make a series per job), so only the circuits this
// process loaded are labels, and the rest are OtherCircuit.
func (m *Metrics) circuitLabel(name string) string {
	if m.o.Circuit != nil {
		if name != OtherCircuit && m.o.Circuit(name) {
			return name
		}
		return OtherCircuit
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.circuits[name] {
		if len(m.circuits) >= MaxCircuitLabels || name == OtherCircuit || name == "" {
			return OtherCircuit
		}
		m.circuits[name] = true
	}
	return name
}

// Buckets of the time histograms, in seconds: 0.5 ms doubling to about 9
// minutes, which covers a 2^10 proof's parse and a 2^26 proof's MSM.
var timeBuckets = prometheus.ExponentialBuckets(0.0005, 2, 21)

// Outcomes of zkpipe_proofs_total, from a result line: proved, failed (the
// job's fault), retryable (the prover host's fault: its disk, its GPU; a
// fleet worker hands the job back), resumed (answered from outputs already
// written). Fixed, so the label stays bounded.
const (
	OutcomeProved    = "proved"
	OutcomeFailed    = "failed"
	OutcomeRetryable = "retryable"
	OutcomeResumed   = "resumed"
)

// Outcome is a result line's outcome label.
func Outcome(r stream.Result) string {
	switch {
	case r.Error != "" && r.Retryable:
		return OutcomeRetryable
	case r.Error != "":
		return OutcomeFailed
	case r.Resumed:
		return OutcomeResumed
	}
	return OutcomeProved
}

// FleetOutcomes are the outcomes of zkpipe_fleet_jobs_total (fleet.Observer).
var FleetOutcomes = []string{"proved", "failed", "republished", "requeued", "duplicate"}

// New makes the collectors of what o says the process produces and
// registers them, with zkpipe_build_info, Go's and the process's.
func New(o Options) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		o:   o,
		proofs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zkpipe_proofs_total",
			Help: "Jobs answered, by circuit and outcome: proved, failed (the job's fault), retryable (the prover host's fault: its disk, its GPU), resumed (answered from outputs already written).",
		}, []string{"circuit", "outcome"}),
		jobSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkpipe_job_seconds",
			Help:    "From entering parse to leaving the last stage reached, by circuit (result lines' total_ms).",
			Buckets: timeBuckets,
		}, []string{"circuit"}),
		run: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkpipe_stage_run_seconds",
			Help:    "Time a stage worked on a job (result lines' run_ms), by stage.",
			Buckets: timeBuckets,
		}, []string{"stage"}),
		queue: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkpipe_stage_queue_seconds",
			Help:    "Time a job waited for a stage's worker, and before synthesize for memory admission (result lines' queue_ms), by stage.",
			Buckets: timeBuckets,
		}, []string{"stage"}),
		fleetJobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zkpipe_fleet_jobs_total",
			Help: "Jobs a fleet worker answered, by outcome: proved, failed (error result, terminated), republished (from stored outputs), requeued (handed back), duplicate (an answer the server already had, dropped by its id).",
		}, []string{"outcome"}),
		fleetWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "zkpipe_fleet_queue_seconds",
			Help:    "Time a job waited in the queue, from submit to a worker taking it (first deliveries).",
			Buckets: timeBuckets,
		}),
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zkpipe_device_busy_seconds_total",
			Help: "Wall time during which at least one device stage was running a job, by device (the GPU, cuda:N, or the backend: cpu); its rate is the device's busy share.",
		}, []string{"device"}),
		circuits: map[string]bool{},
		devices:  map[string]*busyUnion{},
		device:   map[string]bool{},
	}
	ds := o.DeviceStages
	if ds == nil {
		ds = []string{stages.Transfer, stages.MSMH, stages.BatchAdd, stages.TailMSM}
	}
	for _, s := range ds {
		m.device[s] = true
	}
	m.known = map[string]bool{}
	for _, s := range stages.Names {
		m.known[s] = true
	}
	m.reg.MustRegister(buildInfo(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.Engine != nil {
		for _, s := range stages.Names {
			// Present from the first scrape, before any job.
			m.run.WithLabelValues(s)
			m.queue.WithLabelValues(s)
		}
		m.reg.MustRegister(m.proofs, m.jobSeconds, m.run, m.queue, m.busy, engineState{o.Engine})
	}
	if o.Fleet != nil {
		for _, oc := range FleetOutcomes {
			m.fleetJobs.WithLabelValues(oc)
		}
		m.reg.MustRegister(m.fleetJobs, m.fleetWait, fleetState{o.Fleet})
	}
	if o.Backlog != nil {
		m.reg.MustRegister(backlogState{o.Backlog})
	}
	return m
}

// Registry is where the collectors are registered; add more to it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Result records one result line; call it as each line is emitted. A
// request's line has no stages of its own: its partitions' are recorded,
// each on the GPU its line names.
func (m *Metrics) Result(r stream.Result) {
	circuit := m.circuitLabel(r.Circuit)
	m.proofs.WithLabelValues(circuit, Outcome(r)).Inc()
	type ran struct {
		device string
		stages []stream.StageTime
	}
	runs := []ran{{r.Device, r.Stages}}
	if len(r.Partitions) > 0 {
		runs = runs[:0]
		for _, p := range r.Partitions {
			runs = append(runs, ran{p.Device, p.Stages})
		}
	}
	last, seen := 0.0, false
	for _, x := range runs {
		for _, s := range x.stages {
			last, seen = max(last, s.EndedAtMS), true
		}
	}
	if !seen {
		return
	}
	m.jobSeconds.WithLabelValues(circuit).Observe(r.TotalMS / 1000)
	// The line's times are since its stream started; its last stage ended
	// just now, which places them on the wall clock.
	now := time.Now()
	at := func(ms float64) time.Time { return now.Add(-time.Duration((last - ms) * float64(time.Millisecond))) }
	for _, x := range runs {
		device := m.deviceName(x.device)
		for _, s := range x.stages {
			if !m.known[s.Stage] {
				continue // a stage name from a result line, not one of ours
			}
			m.run.WithLabelValues(s.Stage).Observe(s.RunMS / 1000)
			m.queue.WithLabelValues(s.Stage).Observe(s.QueueMS / 1000)
			if m.device[s.Stage] {
				m.addBusy(device, at(s.StartedAtMS), at(s.EndedAtMS))
			}
		}
	}
}

// Job counts a fleet worker's answer to one job (fleet.Observer).
func (m *Metrics) Job(outcome string) { m.fleetJobs.WithLabelValues(outcome).Inc() }

// Waited records a job's wait in the queue (fleet.Observer).
func (m *Metrics) Waited(d time.Duration) { m.fleetWait.Observe(d.Seconds()) }

// deviceName labels a job's device time: the GPU its line names
// ("cuda:1": a host's GPUs each have their own series), else the backend's
// name (the CPU's "cpu").
func (m *Metrics) deviceName(gpu string) string {
	if gpu != "" {
		return gpu
	}
	if m.o.Engine != nil {
		if b := m.o.Engine().Backend; b != "" {
			return b
		}
	}
	return "device"
}

func (m *Metrics) addBusy(device string, from, to time.Time) {
	m.mu.Lock()
	u := m.devices[device]
	if u == nil {
		u = &busyUnion{}
		m.devices[device] = u
	}
	added := u.add(from, to)
	m.mu.Unlock()
	if added > 0 {
		m.busy.WithLabelValues(device).Add(added.Seconds())
	}
}

// busyUnion is the union of recent busy intervals, so that stages running
// at once count once. Intervals ending more than keep before the latest
// are forgotten: results arrive within seconds of their stages.
type busyUnion struct {
	spans []span // disjoint, sorted by start
}

type span struct{ from, to time.Time }

const keep = 10 * time.Minute

// add merges [from, to) in and returns how much time it newly covers.
func (u *busyUnion) add(from, to time.Time) time.Duration {
	if !to.After(from) {
		return 0
	}
	covered := time.Duration(0)
	var out []span
	merged := span{from, to}
	for _, s := range u.spans {
		if s.to.Before(merged.from) || s.from.After(merged.to) {
			out = append(out, s)
			continue
		}
		// overlap of s with [from, to)
		lo, hi := maxTime(s.from, from), minTime(s.to, to)
		if hi.After(lo) {
			covered += hi.Sub(lo)
		}
		merged = span{minTime(s.from, merged.from), maxTime(s.to, merged.to)}
	}
	out = append(out, merged)
	// keep sorted and drop the old
	for i := len(out) - 1; i > 0 && out[i].from.Before(out[i-1].from); i-- {
		out[i], out[i-1] = out[i-1], out[i]
	}
	latest := out[len(out)-1].to
	for _, s := range out {
		if s.to.After(latest) {
			latest = s.to
		}
	}
	i := 0
	for i < len(out) && out[i].to.Before(latest.Add(-keep)) {
		i++
	}
	u.spans = out[i:]
	return to.Sub(from) - covered
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
