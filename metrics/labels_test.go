package metrics_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/metrics"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// seriesOf scrapes addr's /metrics over HTTP and counts the series of each
// zkpipe family (a histogram's series: one per label set).
func seriesOf(t *testing.T, addr string) (map[string]int, map[string]bool) {
	t.Helper()
	r, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	n, circuits := map[string]int{}, map[string]bool{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "zkpipe_") {
			continue
		}
		n[name] = len(f.Metric)
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "circuit" {
					circuits[l.GetValue()] = true
				}
			}
		}
	}
	return n, circuits
}

// TestCircuitLabelsBounded: 3,000 jobs through a real engine, each naming
// a circuit of its own choosing (and stage names no stage has), give
// series for the one loaded circuit and "other" only; with no engine to
// ask, the first MaxCircuitLabels names and "other".
func TestCircuitLabelsBounded(t *testing.T) {
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
	m := metrics.New(metrics.Options{Engine: eng.Snapshot, Circuit: eng.HasCircuit})
	srv, err := metrics.Serve("127.0.0.1:0", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var jobs strings.Builder
	fmt.Fprintf(&jobs, `{"id":"ok","circuit":"chain","generate":{"seed":1}}`+"\n")
	for i := range 3000 {
		fmt.Fprintf(&jobs, `{"id":"j%d","circuit":"c%d","generate":{"seed":1}}`+"\n", i, i)
	}
	if err := eng.Stream(ctx, ctx, strings.NewReader(jobs.String()), func(r stream.Result) error { m.Result(r); return nil }); err != nil {
		t.Fatal(err)
	}
	// a result line whose stages and circuit are anything at all
	m.Result(stream.Result{ID: "x", Circuit: "other", Stages: []stream.StageTime{{Stage: "made-up"}}})
	n, circuits := seriesOf(t, srv.Addr())
	if len(circuits) != 2 || !circuits["chain"] || !circuits[metrics.OtherCircuit] {
		t.Errorf("circuit labels %v, want chain and other", circuits)
	}
	if n["zkpipe_proofs_total"] > 4 || n["zkpipe_job_seconds"] > 2 {
		t.Errorf("series after 3,000 jobs: %v", n)
	}
	total := 0
	for _, k := range n {
		total += k
	}
	if total > 200 {
		t.Errorf("%d zkpipe series after 3,000 jobs: %v", total, n)
	}

	m2 := metrics.New(metrics.Options{Engine: func() engine.Snapshot { return engine.Snapshot{} }})
	srv2, err := metrics.Serve("127.0.0.1:0", m2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	for i := range 3000 {
		m2.Result(stream.Result{ID: fmt.Sprint("j", i), Circuit: fmt.Sprint("c", i), Error: "x"})
	}
	if _, circuits := seriesOf(t, srv2.Addr()); len(circuits) != metrics.MaxCircuitLabels+1 || !circuits[metrics.OtherCircuit] {
		t.Errorf("%d circuit labels without an engine, want %d and other", len(circuits), metrics.MaxCircuitLabels)
	}
}
