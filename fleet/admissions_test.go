package fleet_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/metrics"
)

// A fleet job is admitted once: a worker over a real engine proves 3
// witness jobs (each witness held with the memory budget as parse reads
// it, then the job admitted to synthesize), and its /metrics counts 3
// admissions and none in flight once they are answered. Before, each
// witness's hold counted as an admission too: 6 for 3 jobs.
func TestEachFleetJobAdmittedOnce(t *testing.T) {
	t.Chdir(t.TempDir()) // the engine's default directory would be ./out
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf(`{"id":"a%d","circuit":"chain","witness":%q}`, i, chainWitnessFile(t, int64(i+1))))
	}
	submit(t, q, "", lines...)
	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Output: fleet.PerJobOutput{}, Log: testLog{t},
		Memory: engine.MemoryOptions{Budget: "8GiB"}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := metrics.Serve("127.0.0.1:0", metrics.New(metrics.Options{Engine: eng.Snapshot}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	w := fleet.NewWorker(q, eng, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: testLog{t}})
	runUntilEnd(t, w)
	for id, r := range waitResults(t, q, 3, 60*time.Second) {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
	r, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bufio.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s: %v", name, f)
		}
		if c := f.Metric[0].GetCounter(); c != nil {
			return c.GetValue()
		}
		return f.Metric[0].GetGauge().GetValue()
	}
	if n := value("zkpipe_admissions_total"); n != 3 {
		t.Errorf("zkpipe_admissions_total %v for 3 fleet jobs, want 3", n)
	}
	if n := value("zkpipe_admitted_jobs"); n != 0 {
		t.Errorf("zkpipe_admitted_jobs %v once every job is answered", n)
	}
}
