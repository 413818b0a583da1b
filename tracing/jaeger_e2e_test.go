package tracing_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/stream"
)

// The end-to-end test of issue 6: a real Jaeger all-in-one receives the
// spans of `zkpipe prove` over OTLP, and its HTTP query API must return, for
// every job, a span per stage nested in the job's span, with stages of
// different jobs overlapping in time.
//
// It runs when ZKPIPE_JAEGER names a Jaeger binary (.ci/jaeger-e2e.sh builds
// one from the Go module proxy); then anything wrong fails it. ZKPIPE_BIN
// may name a built zkpipe; otherwise the test builds one.

var stageNames = []string{"parse", "synthesize", "transfer", "msm-h", "batch-add", "tail-msm", "b-g2", "assemble"}

func TestJaegerEndToEnd(t *testing.T) {
	jaegerBin := os.Getenv("ZKPIPE_JAEGER")
	if jaegerBin == "" {
		t.Skip("set ZKPIPE_JAEGER=path/to/jaeger to run the Jaeger end-to-end test (.ci/jaeger-e2e.sh does)")
	}
	if _, err := os.Stat(jaegerBin); err != nil {
		t.Fatalf("ZKPIPE_JAEGER: %v", err)
	}
	dir := t.TempDir()
	j := startJaeger(t, jaegerBin, dir)
	zk := zkpipeBinary(t, dir)

	circuit := filepath.Join(dir, "mulchain")
	run(t, zk, 0, "setup", "--builtin", "mulchain", "--constraints", "2000", "--dir", circuit)

	// Two workers and a queue of two at every stage, so that jobs overlap.
	shape := []string{"--device", "cpu", "--msm-tasks", "1", "--fft-tasks", "1"}
	for _, s := range stageNames {
		shape = append(shape, "--"+s+"-workers", "2", "--"+s+"-queue", "2")
	}
	tag := fmt.Sprintf("e2e%d", time.Now().UnixNano()%1e9)

	// Run 1: OTLP/gRPC, one trace per job.
	t.Run("grpc per job", func(t *testing.T) {
		ids, results := prove(t, zk, dir, circuit, tag+"-g", 6, false, append(shape, "--otlp-endpoint", "http://"+j.otlpGRPC)...)
		traces := j.waitForJobs(t, ids)
		jobs := checkJobs(t, traces, ids, results)
		for _, id := range ids {
			if jobs[id].parent != "" {
				t.Errorf("job %s has parent span %s; want one trace per job", id, jobs[id].parent)
			}
		}
		checkOverlap(t, ids, jobs)
		checkResource(t, traces)
	})

	// Run 2: OTLP/HTTP, the whole stream of 4 good jobs and a bad one under
	// one stream span.
	t.Run("http grouped", func(t *testing.T) {
		ids, results := prove(t, zk, dir, circuit, tag+"-h", 4, true,
			append(shape, "--otlp-endpoint", "http://"+j.otlpHTTP, "--otlp-protocol", "http", "--trace-group", "5")...)
		bad := tag + "-h-bad"
		traces := j.waitForJobs(t, append(ids, bad))
		jobs := checkJobs(t, traces, ids, results)
		checkFailed(t, traces, bad, jobs[ids[0]].trace.TraceID)
		trace := jobs[ids[0]].trace
		var stream *span
		for i := range trace.Spans {
			if trace.Spans[i].OperationName == "stream" {
				stream = &trace.Spans[i]
			}
		}
		if stream == nil {
			t.Fatalf("no stream span in the trace of %s", ids[0])
		}
		if n, _ := stream.tag("zkpipe.jobs").(float64); n != 5 {
			t.Errorf("stream span: zkpipe.jobs = %v, want 5", stream.tag("zkpipe.jobs"))
		}
		if n, _ := stream.tag("zkpipe.failed_jobs").(float64); n != 1 {
			t.Errorf("stream span: zkpipe.failed_jobs = %v, want 1", stream.tag("zkpipe.failed_jobs"))
		}
		for _, id := range ids {
			sj := jobs[id]
			if sj.trace.TraceID != trace.TraceID || sj.parent != stream.SpanID {
				t.Errorf("job %s: trace %s parent %s; want trace %s under stream span %s", id, sj.trace.TraceID, sj.parent, trace.TraceID, stream.SpanID)
			}
			if sj.job.StartTime < stream.StartTime || sj.job.end() > stream.end()+1 {
				t.Errorf("job %s (%d..%d µs) outside its stream span (%d..%d)", id, sj.job.StartTime, sj.job.end(), stream.StartTime, stream.end())
			}
		}
		checkOverlap(t, ids, jobs)
	})
}

// ---------------------------------------------------------------- Jaeger

type jaeger struct {
	otlpGRPC, otlpHTTP, query string // host:port
}

// startJaeger runs the all-in-one on free local ports with in-memory
// storage, and stops it when the test ends, pass or fail.
func startJaeger(t *testing.T, bin, dir string) *jaeger {
	t.Helper()
	ports := freePorts(t, 5)
	j := &jaeger{otlpGRPC: ports[0], otlpHTTP: ports[1], query: ports[2]}
	config := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  healthcheckv2:
    use_v2: true
    http:
      endpoint: %s
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
      http:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`, j.query, ports[3], ports[4], j.otlpGRPC, j.otlpHTTP)
	cfgPath := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "jaeger.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start jaeger: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// Stop Jaeger, pass or fail: SIGTERM, then SIGKILL after 10 s.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("jaeger log (tail):\n%s", b)
		}
	})

	// Ready when the query API answers.
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("jaeger exited at start: %v", err)
		default:
		}
		resp, err := http.Get("http://" + j.query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger's query API at %s not up after 90 s: %v", j.query, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// Jaeger's JSON (api_v2 via /api/traces): times and durations in µs.
type traceJSON struct {
	TraceID   string `json:"traceID"`
	Spans     []span `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
		Tags        []tag  `json:"tags"`
	} `json:"processes"`
}

type span struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64 `json:"startTime"`
	Duration  int64 `json:"duration"`
	Tags      []tag `json:"tags"`
	ProcessID string
}

type tag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func (s *span) end() int64 { return s.StartTime + s.Duration }

func (s *span) tag(key string) any {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return nil
}

func (s *span) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// waitForJobs polls the query API until a job span of every id is stored
// (the exporter flushed them as zkpipe exited; Jaeger batches for 100 ms),
// and returns the traces holding them.
func (j *jaeger) waitForJobs(t *testing.T, ids []string) []traceJSON {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		traces, err := j.traces()
		missing := len(ids)
		if err == nil {
			found := map[string]bool{}
			for _, tr := range traces {
				for i := range tr.Spans {
					if id, _ := tr.Spans[i].tag("zkpipe.job.id").(string); tr.Spans[i].OperationName == "job" {
						found[id] = true
					}
				}
			}
			missing = 0
			for _, id := range ids {
				if !found[id] {
					missing++
				}
			}
			if missing == 0 {
				return traces
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s Jaeger has %d of %d jobs (last error: %v)", len(ids)-missing, len(ids), err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func (j *jaeger) traces() ([]traceJSON, error) {
	resp, err := http.Get("http://" + j.query + "/api/traces?service=zkpipe&limit=1000")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/traces: %s: %.300s", resp.Status, body)
	}
	var out struct {
		Data []traceJSON `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET /api/traces: %v", err)
	}
	return out.Data, nil
}

// ---------------------------------------------------------------- zkpipe

func zkpipeBinary(t *testing.T, dir string) string {
	t.Helper()
	if bin := os.Getenv("ZKPIPE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "zkpipe")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/zkpipe/zkpipe")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build zkpipe: %v\n%s", err, out)
	}
	return bin
}

// run runs zkpipe with args and wants exit code code (2: the run finished
// and some jobs failed; README's exit codes).
func run(t *testing.T, bin string, code int, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("zkpipe %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	if got != code {
		t.Fatalf("zkpipe %s: exit code %d, want %d\n%s", strings.Join(args, " "), got, code, stderr.Bytes())
	}
	return out
}

// prove runs n jobs named PREFIX-jI through zkpipe prove and returns their
// ids in input order and their result lines, each checked to be a proof.
// With bad, a last job PREFIX-bad names a missing witness and must fail.
func prove(t *testing.T, bin, dir, circuit, prefix string, n int, bad bool, flags ...string) ([]string, map[string]stream.Result) {
	t.Helper()
	var jobs bytes.Buffer
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-j%d", prefix, i)
		ids = append(ids, id)
		fmt.Fprintf(&jobs, `{"id":%q,"generate":{"seed":%d}}`+"\n", id, i+1)
	}
	if bad {
		fmt.Fprintf(&jobs, `{"id":"%s-bad","witness":%q}`+"\n", prefix, filepath.Join(dir, "no-such-witness"))
	}
	jobsPath := filepath.Join(dir, prefix+".jobs.jsonl")
	if err := os.WriteFile(jobsPath, jobs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	resultsPath := filepath.Join(dir, prefix+".results.jsonl")
	args := append([]string{"prove", "--circuit", circuit, "--jobs", jobsPath, "--out", filepath.Join(dir, "out"), "--results", resultsPath}, flags...)
	code := 0
	if bad {
		code = 2 // one job failed
	}
	run(t, bin, code, args...)
	lines, err := stream.ReadResultsFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]stream.Result{}
	for _, r := range lines {
		if r.ID == prefix+"-bad" {
			if r.Error == "" || r.FailedStage != "parse" {
				t.Fatalf("job %s with a missing witness: error %q in stage %q, want a parse error", r.ID, r.Error, r.FailedStage)
			}
		} else if r.Error != "" || r.Proof == "" {
			t.Fatalf("job %s: no proof: %s", r.ID, r.Error)
		}
		results[r.ID] = r
	}
	want := n
	if bad {
		want++
	}
	if len(results) != want {
		t.Fatalf("%d results for %d jobs", len(results), want)
	}
	return ids, results
}

// ---------------------------------------------------------------- checks

type jobSpans struct {
	trace  *traceJSON
	job    *span
	parent string
	stages map[string]*span
}

// checkJobs finds each job's span and its stage spans, and checks that
// every stage is there, nested in the job's span in time and as a child,
// with the job's attributes and the worker of its result line.
func checkJobs(t *testing.T, traces []traceJSON, ids []string, results map[string]stream.Result) map[string]*jobSpans {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	jobs := map[string]*jobSpans{}
	for ti := range traces {
		tr := &traces[ti]
		byID := map[string]*span{}
		for i := range tr.Spans {
			byID[tr.Spans[i].SpanID] = &tr.Spans[i]
		}
		for i := range tr.Spans {
			s := &tr.Spans[i]
			id, _ := s.tag("zkpipe.job.id").(string)
			if s.OperationName != "job" || !want[id] {
				continue
			}
			if jobs[id] != nil {
				t.Errorf("job %s has two job spans", id)
			}
			js := &jobSpans{trace: tr, job: s, parent: s.parent(), stages: map[string]*span{}}
			for k := range tr.Spans {
				c := &tr.Spans[k]
				if c.parent() != s.SpanID {
					continue
				}
				if js.stages[c.OperationName] != nil {
					t.Errorf("job %s: two %s spans", id, c.OperationName)
				}
				js.stages[c.OperationName] = c
			}
			jobs[id] = js
		}
	}
	for _, id := range ids {
		js := jobs[id]
		if js == nil {
			t.Errorf("job %s: no job span in Jaeger", id)
			continue
		}
		r := results[id]
		if c, _ := js.job.tag("zkpipe.circuit").(string); c != "mulchain" {
			t.Errorf("job %s: zkpipe.circuit = %v", id, js.job.tag("zkpipe.circuit"))
		}
		if n, _ := js.job.tag("zkpipe.constraints").(float64); n < 2000 {
			t.Errorf("job %s: zkpipe.constraints = %v", id, js.job.tag("zkpipe.constraints"))
		}
		if d, _ := js.job.tag("zkpipe.device").(string); d != "cpu" {
			t.Errorf("job %s: zkpipe.device = %v", id, js.job.tag("zkpipe.device"))
		}
		if js.job.tag("zkpipe.reserved_bytes") == nil {
			t.Errorf("job %s: no zkpipe.reserved_bytes", id)
		}
		if got, want := float64(js.job.Duration)/1000, r.TotalMS; math.Abs(got-want) > 1 {
			t.Errorf("job %s: span of %.3f ms, result line says %.3f ms", id, got, want)
		}
		if len(js.stages) != len(stageNames) {
			t.Errorf("job %s: %d child spans, want the %d stages", id, len(js.stages), len(stageNames))
		}
		for k, name := range stageNames {
			s := js.stages[name]
			if s == nil {
				t.Errorf("job %s: no %s span", id, name)
				continue
			}
			// µs rounding: an end may come out 1 µs past the job's.
			if s.StartTime < js.job.StartTime || s.end() > js.job.end()+1 {
				t.Errorf("job %s: %s span %d..%d µs outside the job's %d..%d", id, name, s.StartTime, s.end(), js.job.StartTime, js.job.end())
			}
			if w, _ := s.tag("zkpipe.worker").(float64); int(w) != r.Stages[k].Worker {
				t.Errorf("job %s %s: zkpipe.worker %v, result line says %d", id, name, s.tag("zkpipe.worker"), r.Stages[k].Worker)
			}
			if got, want := float64(s.Duration)/1000, r.Stages[k].RunMS; math.Abs(got-want) > 0.01 {
				t.Errorf("job %s %s: span of %.3f ms, result line says run %.3f ms", id, name, got, want)
			}
			if _, ok := s.tag("zkpipe.queue_ms").(float64); !ok {
				t.Errorf("job %s %s: no zkpipe.queue_ms", id, name)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return jobs
}

// checkOverlap wants a stage of a later job (in input order) running while a
// stage of an earlier job runs: the pipeline's point.
func checkOverlap(t *testing.T, ids []string, jobs map[string]*jobSpans) {
	t.Helper()
	type pair struct {
		a, b string
		us   int64
	}
	var found []pair
	for i := range ids {
		for k := i + 1; k < len(ids); k++ {
			for _, a := range jobs[ids[i]].stages {
				for _, b := range jobs[ids[k]].stages {
					if ov := min(a.end(), b.end()) - max(a.StartTime, b.StartTime); ov > 0 {
						found = append(found, pair{ids[i] + "/" + a.OperationName, ids[k] + "/" + b.OperationName, ov})
					}
				}
			}
		}
	}
	if len(found) == 0 {
		t.Fatalf("no stage of a later job overlaps a stage of an earlier one in Jaeger")
	}
	sort.Slice(found, func(i, j int) bool { return found[i].us > found[j].us })
	t.Logf("%d overlapping stage pairs; longest: %s with %s for %d µs", len(found), found[0].a, found[0].b, found[0].us)
}

// checkFailed wants the failed job in the group's trace, its span and its
// parse span marked as errors (Jaeger: tag error=true), and no later stages.
func checkFailed(t *testing.T, traces []traceJSON, id, traceID string) {
	t.Helper()
	for _, tr := range traces {
		for i := range tr.Spans {
			s := &tr.Spans[i]
			if got, _ := s.tag("zkpipe.job.id").(string); s.OperationName != "job" || got != id {
				continue
			}
			if tr.TraceID != traceID {
				t.Errorf("failed job %s in trace %s, not its group's %s", id, tr.TraceID, traceID)
			}
			if s.tag("error") != true || s.tag("zkpipe.failed_stage") != "parse" {
				t.Errorf("failed job %s: error=%v zkpipe.failed_stage=%v, want true and parse", id, s.tag("error"), s.tag("zkpipe.failed_stage"))
			}
			var children []string
			for k := range tr.Spans {
				c := &tr.Spans[k]
				if c.parent() == s.SpanID {
					children = append(children, c.OperationName)
					if c.tag("error") != true {
						t.Errorf("failed job %s: its %s span is not marked error", id, c.OperationName)
					}
				}
			}
			if len(children) != 1 || children[0] != "parse" {
				t.Errorf("failed job %s: stage spans %v, want [parse]", id, children)
			}
			return
		}
	}
	t.Errorf("failed job %s: no span in Jaeger", id)
}

// checkResource wants the service, host and backend on the spans' process.
func checkResource(t *testing.T, traces []traceJSON) {
	t.Helper()
	for _, tr := range traces {
		for _, p := range tr.Processes {
			tags := map[string]any{}
			for _, tg := range p.Tags {
				tags[tg.Key] = tg.Value
			}
			if p.ServiceName != "zkpipe" || tags["host.name"] == nil || tags["zkpipe.backend"] != "cpu" {
				t.Fatalf("process %s %v: want service zkpipe with host.name and zkpipe.backend=cpu", p.ServiceName, tags)
			}
		}
	}
}
