package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/metrics"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// scrape runs a real engine over a few jobs of a small circuit (one of them
// bad) with metrics on, and returns what /metrics and /healthz serve.
func scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chain")
	if _, err := gnarksrc.Setup("mulchain", 200, dir); err != nil {
		t.Fatal(err)
	}
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Options{Device: "cpu", Out: t.TempDir(), Log: os.Stderr}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m := metrics.New(metrics.Options{Engine: eng.Snapshot, Fleet: func() (int, int) { return 0, eng.Capacity() },
		Backlog: func() (map[string]int, error) { return map[string]int{"high": 0, "normal": 3, "low": 0}, nil }})
	srv, err := metrics.Serve("127.0.0.1:0", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	jobs := `{"id":"a","generate":{"seed":1}}
{"id":"b","generate":{"seed":2}}
{"id":"c","witness":"/nonexistent"}
`
	err = eng.Stream(ctx, ctx, strings.NewReader(jobs), func(r stream.Result) error { m.Result(r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	m.Job("proved")

	r, err := http.Get("http://" + srv.Addr() + "/healthz")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("/healthz: %v %v", r, err)
	}
	r.Body.Close()
	r, err = http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

func TestMetricsFromARealRun(t *testing.T) {
	fams := scrape(t)
	value := func(name string, labels map[string]string) float64 {
		f := fams[name]
		if f == nil {
			t.Fatalf("no %s", name)
		}
	next:
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	if v := value("zkpipe_proofs_total", map[string]string{"circuit": "chain", "outcome": "proved"}); v != 2 {
		t.Errorf("proved: %v, want 2", v)
	}
	if v := value("zkpipe_proofs_total", map[string]string{"outcome": "failed"}); v != 1 {
		t.Errorf("failed: %v, want 1", v)
	}
	if v := value("zkpipe_stage_run_seconds", map[string]string{"stage": "msm-h"}); v != 2 {
		t.Errorf("msm-h observations: %v, want 2", v)
	}
	if v := value("zkpipe_rss_bytes", nil); v <= 0 {
		t.Errorf("rss %v", v)
	}
	if v := value("zkpipe_device_busy_seconds_total", map[string]string{"device": "cpu"}); v <= 0 {
		t.Errorf("device busy %v", v)
	}
	value("zkpipe_stage_jobs", map[string]string{"stage": "assemble", "state": "running"})
}

// TestDashboardNamesRealMetrics parses every query of the Grafana dashboard
// and checks each metric it names is on a real /metrics.
func TestDashboardNamesRealMetrics(t *testing.T) {
	fams := scrape(t)
	have := map[string]bool{}
	for name, f := range fams {
		have[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				have[name+s] = true
			}
		}
	}
	data, err := os.ReadFile(filepath.Join("grafana", "zkpipe.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" {
					exprs = append(exprs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(dash)
	if len(exprs) < 10 {
		t.Fatalf("%d queries in the dashboard", len(exprs))
	}
	for _, e := range exprs {
		names, err := promqlMetrics(e)
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: names no metric", e)
		}
		for _, n := range names {
			if !have[n] {
				t.Errorf("%s: no metric %s on /metrics", e, n)
			}
		}
	}
}

// promqlMetrics returns the metric names a PromQL expression selects. It
// knows the functions and keywords the dashboard uses, checks brackets
// balance, and refuses anything else it does not understand.
func promqlMetrics(e string) ([]string, error) {
	funcs := map[string]bool{"rate": true, "irate": true, "increase": true, "sum": true, "avg": true, "max": true, "min": true,
		"count": true, "histogram_quantile": true, "clamp_min": true, "clamp_max": true, "abs": true}
	grouping := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true}
	var names []string
	var stack []rune
	rs := []rune(e)
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
			if c == '[' { // a range: 5m, $__rate_interval
				j := i + 1
				for j < len(rs) && rs[j] != ']' {
					j++
				}
				i = j
				continue
			}
			if c == '{' { // label matchers
				j := i + 1
				for j < len(rs) && rs[j] != '}' {
					j++
				}
				i = j
				continue
			}
			i++
		case c == ')' || c == ']' || c == '}':
			open := map[rune]rune{')': '(', ']': '[', '}': '{'}[c]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return nil, fmt.Errorf("unbalanced %c at %d", c, i)
			}
			stack = stack[:len(stack)-1]
			i++
		case c == '_' || unicode.IsLetter(c):
			j := i
			for j < len(rs) && (rs[j] == '_' || rs[j] == ':' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			word := string(rs[i:j])
			k := j
			for k < len(rs) && unicode.IsSpace(rs[k]) {
				k++
			}
			switch {
			case grouping[word]: // by (a, b): skip the label list
				if k >= len(rs) || rs[k] != '(' {
					return nil, fmt.Errorf("%s without a label list", word)
				}
				for k < len(rs) && rs[k] != ')' {
					k++
				}
				j = k + 1
			case k < len(rs) && rs[k] == '(':
				if !funcs[word] {
					return nil, fmt.Errorf("unknown function %s", word)
				}
			case funcs[word]: // an aggregation followed by its grouping: sum by (x) (…)
				rest := strings.TrimSpace(string(rs[k:]))
				if !strings.HasPrefix(rest, "by") && !strings.HasPrefix(rest, "without") {
					return nil, fmt.Errorf("%s without arguments", word)
				}
			default:
				names = append(names, word)
			}
			i = j
		case unicode.IsDigit(c) || c == '.':
			for i < len(rs) && (unicode.IsDigit(rs[i]) || rs[i] == '.' || rs[i] == 'e') {
				i++
			}
		case strings.ContainsRune("+-*/,", c):
			i++
		default:
			return nil, fmt.Errorf("unexpected %q at %d", c, i)
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("unclosed %c", stack[len(stack)-1])
	}
	return names, nil
}

func TestBusyTimeCountsOverlapOnce(t *testing.T) {
	m := metrics.New(metrics.Options{Engine: func() engine.Snapshot { return engine.Snapshot{Backend: "cpu"} }})
	// Two jobs whose device stages overlap: transfer 0–100 ms and msm-h
	// 100–300 ms of one, msm-h 200–400 ms of the other: busy 400 ms in all.
	line := func(id string, spans ...[2]float64) stream.Result {
		r := stream.Result{ID: id, Circuit: "x"}
		names := []string{"transfer", "msm-h"}
		for i, s := range spans {
			r.Stages = append(r.Stages, stream.StageTime{Stage: names[i], StartedAtMS: s[0], EndedAtMS: s[1], RunMS: s[1] - s[0]})
		}
		return r
	}
	m.Result(line("a", [2]float64{0, 100}, [2]float64{100, 300}))
	time.Sleep(100 * time.Millisecond) // b ends 100 ms after a, as its times say
	m.Result(line("b", [2]float64{200, 200}, [2]float64{200, 400}))
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "zkpipe_device_busy_seconds_total" {
			got := f.Metric[0].Counter.GetValue()
			if got < 0.38 || got > 0.42 {
				t.Fatalf("busy %.3fs, want 0.4", got)
			}
			return
		}
	}
	t.Fatal("no zkpipe_device_busy_seconds_total")
}

func TestPromQLNames(t *testing.T) {
	got, err := promqlMetrics(`sum by (a, le) (rate(x_total{b="c"}[5m])) / ignoring (d) y + histogram_quantile(0.9, z_bucket)`)
	if err != nil || strings.Join(got, " ") != "x_total y z_bucket" {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{`rate(x[5m]`, `frobnicate(x)`, `sum x`} {
		if _, err := promqlMetrics(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// Device time is counted by the GPU a line names (a host's GPUs each a
// series), and a request's line, which has no stages of its own, counts
// its partitions' stages: before, a request recorded no stage and no busy
// time, and every GPU was one "cuda" series.
func TestBusyTimeByGPUAndPartitions(t *testing.T) {
	m := metrics.New(metrics.Options{Engine: func() engine.Snapshot { return engine.Snapshot{Backend: "cuda"} }})
	stages := func(from, to float64) []stream.StageTime {
		return []stream.StageTime{{Stage: "synthesize", StartedAtMS: from - 50, EndedAtMS: from, RunMS: 50},
			{Stage: "msm-h", StartedAtMS: from, EndedAtMS: to, RunMS: to - from}}
	}
	m.Result(stream.Result{ID: "req", Circuit: "x", TotalMS: 450, Partitions: []stream.PartitionResult{
		{Index: 0, ID: "req/0", Device: "cuda:0", Stages: stages(100, 300)},
		{Index: 1, ID: "req/1", Device: "cuda:1", Stages: stages(150, 400)},
		{Index: 2, ID: "req/2", Device: "cuda:0", Stages: stages(300, 400)},
	}})
	m.Result(stream.Result{ID: "cpu-line", Circuit: "x", TotalMS: 100, Stages: stages(400, 500)})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	busy := map[string]float64{}
	msmRuns := uint64(0)
	for _, f := range fams {
		for _, mt := range f.Metric {
			switch f.GetName() {
			case "zkpipe_device_busy_seconds_total":
				for _, l := range mt.Label {
					if l.GetName() == "device" {
						busy[l.GetValue()] = mt.Counter.GetValue()
					}
				}
			case "zkpipe_stage_run_seconds":
				for _, l := range mt.Label {
					if l.GetName() == "stage" && l.GetValue() == "msm-h" {
						msmRuns += mt.Histogram.GetSampleCount()
					}
				}
			}
		}
	}
	// cuda:0: 100–300 and 300–400 (0.3 s); cuda:1: 150–400 (0.25 s); the
	// line with no GPU: the backend's name, 0.1 s
	want := map[string]float64{"cuda:0": 0.3, "cuda:1": 0.25, "cuda": 0.1}
	for d, w := range want {
		if got := busy[d]; got < w-0.02 || got > w+0.02 {
			t.Errorf("device %s busy %.3fs, want %.2f (all: %v)", d, got, w, busy)
		}
	}
	if len(busy) != len(want) {
		t.Errorf("busy series %v, want %v", busy, want)
	}
	if msmRuns != 4 {
		t.Errorf("%d msm-h runs recorded, want 4 (three partitions and a line)", msmRuns)
	}
}
