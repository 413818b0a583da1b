package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/stages"
)

// engineState reads the engine's snapshot at each scrape, and fleetState a
// fleet worker's counts, so the gauges are never stale.
type (
	engineState struct{ snap func() engine.Snapshot }
	fleetState  struct{ counts func() (inHand, capacity int) }
	// backlogState reads the fleet queue's backlog at each scrape.
	backlogState struct {
		read func() (map[string]int, error)
	}
)

var (
	descStageJobs = prometheus.NewDesc("zkpipe_stage_jobs",
		"Jobs in each stage now: state=queued (in its channel, or waiting for memory admission before synthesize) or running.",
		[]string{"stage", "state"}, nil)
	descRSS       = prometheus.NewDesc("zkpipe_rss_bytes", "Resident memory of the process at the governor's latest sample.", nil, nil)
	descRSSPeak   = prometheus.NewDesc("zkpipe_rss_peak_bytes", "Highest resident memory sampled.", nil, nil)
	descBudget    = prometheus.NewDesc("zkpipe_mem_budget_bytes", "The RSS budget (--mem-budget); absent when off.", nil, nil)
	descCharged   = prometheus.NewDesc("zkpipe_mem_resident_bytes", "Charged to the budget for the whole run: resident keys and pinned pools.", nil, nil)
	descReserved  = prometheus.NewDesc("zkpipe_mem_reserved_bytes", "Reserved by the jobs admitted now.", nil, nil)
	descPinned    = prometheus.NewDesc("zkpipe_pinned_bytes", "Page-locked host memory held for staging.", nil, nil)
	descPinnedBud = prometheus.NewDesc("zkpipe_pinned_budget_bytes", "The pinned budget (--pinned-budget); absent when off.", nil, nil)
	descAdmitted  = prometheus.NewDesc("zkpipe_admitted_jobs", "Jobs past memory admission and not yet finished.", nil, nil)
	descWaiting   = prometheus.NewDesc("zkpipe_admission_waiting_jobs", "Jobs waiting for memory admission now.", nil, nil)
	descWaits     = prometheus.NewDesc("zkpipe_admission_waits_total", "Admissions that had to wait for memory.", nil, nil)
	descWaitSecs  = prometheus.NewDesc("zkpipe_admission_wait_seconds_total", "Total time jobs waited for memory admission.", nil, nil)
	descGranted   = prometheus.NewDesc("zkpipe_admissions_total", "Jobs admitted to synthesize.", nil, nil)
	descRejected  = prometheus.NewDesc("zkpipe_admission_rejected_total", "Jobs larger than the budget, failed at admission.", nil, nil)
	descInHand    = prometheus.NewDesc("zkpipe_fleet_jobs_in_hand", "Jobs a fleet worker has pulled and not yet answered.", nil, nil)
	descFleetCap  = prometheus.NewDesc("zkpipe_fleet_capacity", "The most jobs a fleet worker holds at once (the pipeline's capacity, or --max-in-hand).", nil, nil)
	descBacklog   = prometheus.NewDesc("zkpipe_fleet_backlog_jobs",
		"Jobs waiting in the fleet's queue for a worker, by priority (not yet delivered to any; the same figure on every worker of a queue).",
		[]string{"priority"}, nil)
	engineDescs = []*prometheus.Desc{descStageJobs, descRSS, descRSSPeak, descBudget, descCharged, descReserved, descPinned, descPinnedBud,
		descAdmitted, descWaiting, descWaits, descWaitSecs, descGranted, descRejected}
)

func (s engineState) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range engineDescs {
		ch <- d
	}
}

func (s fleetState) Describe(ch chan<- *prometheus.Desc) {
	ch <- descInHand
	ch <- descFleetCap
}

func (s fleetState) Collect(ch chan<- prometheus.Metric) {
	in, c := s.counts()
	ch <- prometheus.MustNewConstMetric(descInHand, prometheus.GaugeValue, float64(in))
	ch <- prometheus.MustNewConstMetric(descFleetCap, prometheus.GaugeValue, float64(c))
}

func (s backlogState) Describe(ch chan<- *prometheus.Desc) { ch <- descBacklog }

func (s backlogState) Collect(ch chan<- prometheus.Metric) {
	waiting, err := s.read()
	if err != nil {
		return // absent from this scrape: the queue is out of reach
	}
	for priority, n := range waiting {
		ch <- prometheus.MustNewConstMetric(descBacklog, prometheus.GaugeValue, float64(n), priority)
	}
}

func (s engineState) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	{
		snap := s.snap()
		counts := map[string][2]int{}
		for _, c := range snap.Stages {
			counts[c.Name] = [2]int{c.Queued, c.Running}
		}
		for _, name := range stages.Names { // every stage, before Run too
			c := counts[name]
			gauge(descStageJobs, float64(c[0]), name, "queued")
			gauge(descStageJobs, float64(c[1]), name, "running")
		}
		m := snap.Memory
		gauge(descRSS, float64(m.RSS))
		gauge(descRSSPeak, float64(m.PeakRSS))
		if m.Budget != mem.Unlimited {
			gauge(descBudget, float64(m.Budget))
		}
		gauge(descCharged, float64(m.Charged))
		gauge(descReserved, float64(m.Reserved))
		gauge(descPinned, float64(m.Pinned))
		if m.PinnedBudget != mem.Unlimited {
			gauge(descPinnedBud, float64(m.PinnedBudget))
		}
		gauge(descAdmitted, float64(m.Admitted))
		gauge(descWaiting, float64(m.Waiting))
		counter(descWaits, float64(m.Waits))
		counter(descWaitSecs, m.WaitTime.Seconds())
		counter(descGranted, float64(m.Granted))
		counter(descRejected, float64(m.Rejected))
	}
}
