package fleet_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// lintedScrape GETs addr's /metrics, fails t on anything promtool check
// metrics reports (it runs this promlint), and returns the zkpipe families.
func lintedScrape(t *testing.T, who, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	r, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("%s: promlint: %v", who, err)
	}
	for _, p := range problems {
		t.Errorf("%s: promtool check metrics: %s: %s", who, p.Metric, p.Text)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for name, f := range fams {
		if strings.HasPrefix(name, "zkpipe_") {
			out[name] = f
		}
	}
	if b := out["zkpipe_build_info"]; b == nil || len(b.Metric) != 1 || b.Metric[0].GetGauge().GetValue() != 1 || len(b.Metric[0].Label) != 3 {
		t.Errorf("%s: zkpipe_build_info %v, want 1 with version, revision, goversion", who, b)
	}
	return out
}

// TestProcessesMetrics: the /metrics of real processes — serve's queue
// alone, a worker that answered a proved and a failed job, and prove over
// stdin mid-stream — are promtool-clean, carry zkpipe_build_info, and each
// only the families its process produces (prove none of the fleet's, the
// queue none of a prover's).
func TestProcessesMetrics(t *testing.T) {
	bin := binary(t)
	tmp := t.TempDir()
	nats, qm, wm, pm := freePort(t), freePort(t), freePort(t), freePort(t)
	url := "nats://" + nats
	start(t, bin, "serve", serveArgs(nats, qm, filepath.Join(tmp, "store"))...)
	waitHealthy(t, qm)
	for name := range lintedScrape(t, "serve's queue", qm) {
		if name != "zkpipe_build_info" {
			t.Errorf("serve's queue (no worker) exports %s", name)
		}
	}

	dir := circuitDir(t)
	run(t, bin, "", "circuit", "push", "--nats", url, dir)
	start(t, bin, "worker", "worker", "--nats", url, "--cache", filepath.Join(tmp, "cache"), "--mem-status", "0", "--metrics-addr", wm)
	run(t, bin, `{"id":"ok","circuit":"chain","generate":{"seed":1}}`+"\n"+`{"id":"bad","circuit":"nope","generate":{"seed":1}}`+"\n",
		"submit", "--nats", url, "-")
	waitResults(t, openQueue(t, url, 0), 2, 120*time.Second)
	fams := lintedScrape(t, "worker", wm)
	for _, name := range []string{"zkpipe_proofs_total", "zkpipe_stage_run_seconds", "zkpipe_fleet_jobs_total", "zkpipe_fleet_capacity", "zkpipe_rss_bytes"} {
		if fams[name] == nil {
			t.Errorf("worker: no %s", name)
		}
	}

	cmd := exec.Command(bin, "prove", "--circuit", dir, "--out", filepath.Join(tmp, "out"), "--mem-status", "0", "--metrics-addr", pm)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("prove: %v\n%s", err, stderr.String())
		}
	}()
	fmt.Fprintln(stdin, `{"id":"p1","generate":{"seed":1}}`)
	if !bufio.NewScanner(stdout).Scan() { // its result line: scraped mid-stream, jobs still to come
		t.Fatalf("prove wrote no result line\n%s", stderr.String())
	}
	waitHealthy(t, pm)
	fams = lintedScrape(t, "prove", pm)
	for name := range fams {
		if strings.HasPrefix(name, "zkpipe_fleet_") {
			t.Errorf("prove (no fleet) exports %s", name)
		}
	}
	if fams["zkpipe_proofs_total"] == nil || fams["zkpipe_stage_jobs"] == nil {
		t.Errorf("prove: no zkpipe_proofs_total or zkpipe_stage_jobs")
	}
}
