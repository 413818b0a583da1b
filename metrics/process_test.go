package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/metrics"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// scrapeText is a real HTTP GET of addr's /metrics, as Prometheus does it.
func scrapeText(t *testing.T, addr string) []byte {
	t.Helper()
	r, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("/metrics: %d %v", r.StatusCode, err)
	}
	return body
}

func parse(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// lint fails t on any problem promtool check metrics would report: it runs
// this same promlint over the same exposition text.
func lint(t *testing.T, who string, body []byte) {
	t.Helper()
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("%s: promlint: %v", who, err)
	}
	for _, p := range problems {
		t.Errorf("%s: promtool check metrics: %s: %s", who, p.Metric, p.Text)
	}
}

// chainDir sets up a small circuit directory, chain.
func chainDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chain")
	if _, err := gnarksrc.Setup("mulchain", 200, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// provingEngine is a real CPU engine over the circuit in dir, out in out.
func provingEngine(t *testing.T, dir, out string, o engine.Options) *engine.Engine {
	t.Helper()
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	o.Device, o.Out, o.Log = "cpu", out, io.Discard
	eng, err := engine.New(context.Background(), o, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func serve(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv, err := metrics.Serve("127.0.0.1:0", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

func zkpipeFamilies(fams map[string]*dto.MetricFamily) map[string]bool {
	got := map[string]bool{}
	for name := range fams {
		if strings.HasPrefix(name, "zkpipe_") {
			got[name] = true
		}
	}
	return got
}

// TestEachProcessExportsWhatItProduces: over a real scrape, the /metrics of
// a prove run (an engine), of a fleet worker (an engine and a worker) and
// of serve's queue alone (neither) each carry zkpipe_build_info and only
// the families that process produces (prove used to export the fleet's as
// zeros, serve's queue every engine histogram), and each is clean under
// promtool check metrics, before any job and after jobs that proved and
// failed.
func TestEachProcessExportsWhatItProduces(t *testing.T) {
	eng := provingEngine(t, chainDir(t), t.TempDir(), engine.Options{})
	prove := metrics.New(metrics.Options{Engine: eng.Snapshot, Circuit: eng.HasCircuit})
	worker := metrics.New(metrics.Options{Engine: eng.Snapshot, Circuit: eng.HasCircuit,
		Fleet:   func() (int, int) { return 0, eng.Capacity() },
		Backlog: func() (map[string]int, error) { return map[string]int{"high": 0, "normal": 2, "low": 0}, nil }})
	queue := metrics.New(metrics.Options{})
	addrs := map[string]string{"prove": serve(t, prove), "worker": serve(t, worker), "queue": serve(t, queue)}

	check := func(when string) {
		for who, addr := range addrs {
			body := scrapeText(t, addr)
			lint(t, who+" "+when, body)
			fams := parse(t, body)
			checkBuildInfo(t, who, fams)
			got := zkpipeFamilies(fams)
			for name := range got {
				fleetOnly := strings.HasPrefix(name, "zkpipe_fleet_")
				switch {
				case who == "queue" && name != "zkpipe_build_info":
					t.Errorf("serve's queue alone (no engine, no worker) exports %s", name)
				case who == "prove" && fleetOnly:
					t.Errorf("prove (no fleet worker) exports %s", name)
				}
			}
			want := map[string][]string{
				"prove":  {"zkpipe_proofs_total", "zkpipe_stage_run_seconds", "zkpipe_stage_jobs", "zkpipe_rss_bytes"},
				"worker": {"zkpipe_stage_run_seconds", "zkpipe_stage_jobs", "zkpipe_fleet_jobs_total", "zkpipe_fleet_queue_seconds", "zkpipe_fleet_capacity", "zkpipe_fleet_backlog_jobs"},
			}[who]
			if when == "after jobs" && who != "queue" {
				want = append(want, "zkpipe_proofs_total", "zkpipe_device_busy_seconds_total")
			}
			for _, name := range want {
				if !got[name] && (who != "prove" || when != "before jobs" || name != "zkpipe_proofs_total") {
					t.Errorf("%s %s: no %s", who, when, name)
				}
			}
		}
	}
	check("before jobs")
	jobs := `{"id":"a","generate":{"seed":1}}
{"id":"b","witness":"/nonexistent"}
`
	ctx := context.Background()
	err := eng.Stream(ctx, ctx, strings.NewReader(jobs), func(r stream.Result) error {
		prove.Result(r)
		worker.Result(r)
		queue.Result(r) // counted nowhere: the queue proves nothing
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	worker.Job("proved")
	queue.Job("proved")
	check("after jobs")
}

func checkBuildInfo(t *testing.T, who string, fams map[string]*dto.MetricFamily) {
	t.Helper()
	f := fams["zkpipe_build_info"]
	if f == nil || f.GetType() != dto.MetricType_GAUGE || len(f.Metric) != 1 {
		t.Errorf("%s: zkpipe_build_info is %v, want one gauge", who, f)
		return
	}
	m := f.Metric[0]
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	version, revision := metrics.BuildVersion()
	if m.GetGauge().GetValue() != 1 || len(labels) != 3 || labels["goversion"] != runtime.Version() ||
		labels["version"] != version || labels["revision"] != revision || version == "" || revision == "" {
		t.Errorf("%s: zkpipe_build_info %v = %v, want 1 with version %q, revision %q, goversion %q",
			who, labels, m.GetGauge().GetValue(), version, revision, runtime.Version())
	}
}

// TestProofsByOutcome: a real engine's jobs that prove, fail for their own
// sake (a missing witness), fail for the host's (their output path taken
// by a directory: the job would prove elsewhere) and are answered from an
// earlier run's outputs (--skip-done) count once each under their own
// outcome, and the outcome label has no other values.
func TestProofsByOutcome(t *testing.T) {
	dir, out := chainDir(t), t.TempDir()
	run := func(o engine.Options, jobs string) map[string]float64 {
		eng := provingEngine(t, dir, out, o)
		m := metrics.New(metrics.Options{Engine: eng.Snapshot, Circuit: eng.HasCircuit})
		addr := serve(t, m)
		ctx := context.Background()
		eng.Stream(ctx, ctx, strings.NewReader(jobs), func(r stream.Result) error { m.Result(r); return nil })
		eng.Close()
		body := scrapeText(t, addr)
		lint(t, "prove", body)
		got := map[string]float64{}
		for _, s := range parse(t, body)["zkpipe_proofs_total"].GetMetric() {
			for _, l := range s.Label {
				if l.GetName() == "outcome" {
					got[l.GetValue()] += s.GetCounter().GetValue()
				}
			}
		}
		return got
	}
	got := run(engine.Options{}, `{"id":"a","generate":{"seed":1}}
{"id":"b","generate":{"seed":2}}
{"id":"c","witness":"/nonexistent"}
`)
	if len(got) != 2 || got[metrics.OutcomeProved] != 2 || got[metrics.OutcomeFailed] != 1 {
		t.Errorf("2 proved and 1 bad witness: %v", got)
	}
	// A witness file's job is answered from its outputs on the next run.
	b, err := circuits.Lookup("mulchain")
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Witness(200, 5)
	if err != nil {
		t.Fatal(err)
	}
	wpath := filepath.Join(t.TempDir(), "e.witness")
	data, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wpath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf(`{"id":"e","witness":%q}`+"\n", wpath)
	if got := run(engine.Options{}, job); got[metrics.OutcomeProved] != 1 {
		t.Fatalf("the witness file's job: %v", got)
	}
	got = run(engine.Options{SkipDone: true}, job)
	if len(got) != 1 || got[metrics.OutcomeResumed] != 1 {
		t.Errorf("1 answered from the first run's outputs: %v", got)
	}
	// A directory where the proof goes: the write fails for the host's sake.
	if err := os.MkdirAll(filepath.Join(out, "d.proof", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	got = run(engine.Options{}, `{"id":"d","generate":{"seed":4}}
`)
	if len(got) != 1 || got[metrics.OutcomeRetryable] != 1 {
		t.Errorf("1 job whose output could not be written: %v", got)
	}
}
