package tracing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zkpipe/zkpipe/pipeline"
)

var stageNames = []string{"parse", "synthesize", "transfer", "msm-h", "batch-add", "tail-msm", "b-g2", "assemble"}

// fakeJob is a job that entered parse's queue at t0+start and spent, in
// every stage, wait then run.
func fakeJob(id string, t0 time.Time, start, wait, run time.Duration) Job {
	j := Job{ID: id, Circuit: "mulchain", Constraints: 2000, ReservedBytes: 1 << 20}
	at := t0.Add(start)
	for w, name := range stageNames {
		tm := pipeline.Timing{Stage: name, Worker: w % 2, Queued: at, Started: at.Add(wait)}
		tm.Finished = tm.Started.Add(run)
		at = tm.Finished
		j.Timings = append(j.Timings, tm)
	}
	return j
}

func noEnv(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(v, "")
	}
}

// memory keeps what it exported after Shutdown (tracetest's in-memory
// exporter forgets it there).
type memory struct {
	mu    sync.Mutex
	spans tracetest.SpanStubs
}

func (m *memory) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spans = append(m.spans, tracetest.SpanStubsFromReadOnlySpans(spans)...)
	return nil
}
func (m *memory) Shutdown(context.Context) error { return nil }
func (m *memory) GetSpans() tracetest.SpanStubs {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(tracetest.SpanStubs(nil), m.spans...)
}

func start(t *testing.T, cfg Config) (*Tracer, *memory) {
	t.Helper()
	exp := &memory{}
	cfg.Exporter = exp
	tr, err := Start(context.Background(), cfg)
	if err != nil || tr == nil {
		t.Fatalf("Start: %v, %v", tr, err)
	}
	return tr, exp
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func TestOffWithoutEndpoint(t *testing.T) {
	noEnv(t)
	tr, err := Start(context.Background(), Config{})
	if tr != nil || err != nil {
		t.Fatalf("no endpoint: got %v, %v; want tracing off", tr, err)
	}
	tr.Record(fakeJob("a", time.Now(), 0, 0, time.Millisecond)) // nil-safe
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !(Config{EndpointFromEnv: true}).Enabled() {
		t.Fatal("endpoint from OTEL_EXPORTER_OTLP_ENDPOINT: want tracing on")
	}
	if (Config{Endpoint: "localhost:4317", Disabled: true}).Enabled() || (Config{EndpointFromEnv: true, Disabled: true}).Enabled() {
		t.Fatal("Disabled (OTEL_SDK_DISABLED=true): want tracing off")
	}
	if !(Config{Disabled: true, Exporter: &memory{}}).Enabled() {
		t.Fatal("an exporter given: want tracing on")
	}
}

func TestBadConfig(t *testing.T) {
	noEnv(t)
	for _, cfg := range []Config{
		{Endpoint: "localhost:4317", Protocol: "carrier-pigeon"},
		{Endpoint: "http://"},
	} {
		if tr, err := Start(context.Background(), cfg); err == nil {
			tr.Close(context.Background())
			t.Errorf("%+v: want an error", cfg)
		}
	}
	// Both protocols build an exporter without dialling.
	for _, p := range []string{"grpc", "http", "http/protobuf"} {
		tr, err := Start(context.Background(), Config{Endpoint: "127.0.0.1:1", Protocol: p})
		if err != nil || tr == nil {
			t.Fatalf("protocol %s: %v", p, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		tr.Close(ctx) // nothing to send: returns at once
		cancel()
	}
}

func TestSpansPerJob(t *testing.T) {
	tr, exp := start(t, Config{Backend: "cpu", Devices: map[string]string{"msm-h": "cpu", "b-g2": "cpu"}})
	t0 := time.Now()
	ok := fakeJob("ok", t0, 0, time.Millisecond, 3*time.Millisecond)
	bad := fakeJob("bad", t0, 2*time.Millisecond, 0, time.Millisecond)
	bad.Timings = bad.Timings[:2]
	bad.Err, bad.FailedStage = errors.New("synthesize: unsatisfied"), "synthesize"
	tr.Record(ok)
	tr.Record(bad)
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 9+3 {
		t.Fatalf("%d spans, want 12", len(spans))
	}
	jobs := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		if s.Name == "job" {
			id, _ := attr(s, "zkpipe.job.id")
			jobs[id.AsString()] = s
			if s.Parent.IsValid() {
				t.Errorf("job %s has a parent; want one trace per job", id.AsString())
			}
		}
	}
	if len(jobs) != 2 || jobs["ok"].SpanContext.TraceID() == jobs["bad"].SpanContext.TraceID() {
		t.Fatalf("want two job spans in two traces, got %v", jobs)
	}
	if v, _ := attr(jobs["ok"], "zkpipe.constraints"); v.AsInt64() != 2000 {
		t.Errorf("constraints = %v", v)
	}
	if v, _ := attr(jobs["ok"], "zkpipe.queue_ms"); v.AsFloat64() != 8 {
		t.Errorf("job queue_ms = %v, want 8", v)
	}
	if !jobs["ok"].StartTime.Equal(ok.Timings[0].Queued) || !jobs["ok"].EndTime.Equal(ok.Timings[7].Finished) {
		t.Errorf("job span %v..%v, want %v..%v", jobs["ok"].StartTime, jobs["ok"].EndTime, ok.Timings[0].Queued, ok.Timings[7].Finished)
	}
	if jobs["bad"].Status.Code != codes.Error || jobs["ok"].Status.Code == codes.Error {
		t.Errorf("status: ok %v, bad %v", jobs["ok"].Status, jobs["bad"].Status)
	}
	seen := map[string]int{}
	for _, s := range spans {
		if s.Name == "job" {
			continue
		}
		id, _ := attr(s, "zkpipe.job.id")
		j, parent := ok, jobs["ok"]
		if id.AsString() == "bad" {
			j, parent = bad, jobs["bad"]
		}
		if s.Parent.SpanID() != parent.SpanContext.SpanID() {
			t.Errorf("%s/%s: parent %v, want the job span", id.AsString(), s.Name, s.Parent.SpanID())
		}
		i := seen[id.AsString()]
		seen[id.AsString()]++
		if s.Name != j.Timings[i].Stage || !s.StartTime.Equal(j.Timings[i].Started) || !s.EndTime.Equal(j.Timings[i].Finished) {
			t.Errorf("%s span %d: %s %v..%v, want %s %v..%v", id.AsString(), i, s.Name, s.StartTime, s.EndTime,
				j.Timings[i].Stage, j.Timings[i].Started, j.Timings[i].Finished)
		}
		if w, _ := attr(s, "zkpipe.worker"); w.AsInt64() != int64(j.Timings[i].Worker) {
			t.Errorf("%s/%s: worker %v", id.AsString(), s.Name, w)
		}
		if _, has := attr(s, "zkpipe.device"); has != (s.Name == "msm-h" || s.Name == "b-g2") {
			t.Errorf("%s/%s: device attribute present = %v", id.AsString(), s.Name, has)
		}
		failed := id.AsString() == "bad" && s.Name == "synthesize"
		if (s.Status.Code == codes.Error) != failed || (len(s.Events) > 0) != failed {
			t.Errorf("%s/%s: status %v, %d events", id.AsString(), s.Name, s.Status, len(s.Events))
		}
	}
	if seen["ok"] != 8 || seen["bad"] != 2 {
		t.Errorf("stage spans: %v, want ok 8 and bad 2", seen)
	}
	res := map[string]string{}
	for _, kv := range spans[0].Resource.Attributes() {
		res[string(kv.Key)] = kv.Value.Emit()
	}
	if res["service.name"] != "zkpipe" || res["zkpipe.backend"] != "cpu" || res["host.name"] == "" {
		t.Errorf("resource %v: want service.name zkpipe, zkpipe.backend cpu and host.name", res)
	}
}

func TestGroups(t *testing.T) {
	tr, exp := start(t, Config{Group: 3, QueueSpans: true})
	t0 := time.Now()
	for i := range 5 {
		tr.Record(fakeJob(fmt.Sprint("j", i), t0, time.Duration(i)*time.Millisecond, time.Millisecond, 2*time.Millisecond))
	}
	if got := len(exp.GetSpans()); got != 0 {
		// the full group of 3 is in the batcher, not yet exported
		t.Logf("%d spans exported before Close", got)
	}
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	byID := map[[8]byte]tracetest.SpanStub{}
	var streams []tracetest.SpanStub
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
		if s.Name == "stream" {
			streams = append(streams, s)
		}
	}
	if len(streams) != 2 {
		t.Fatalf("%d stream spans, want 2 (3 jobs + 2 at Close)", len(streams))
	}
	jobsIn := map[[8]byte]int{}
	queues := 0
	for _, s := range spans {
		switch s.Name {
		case "job":
			p, ok := byID[s.Parent.SpanID()]
			if !ok || p.Name != "stream" || s.SpanContext.TraceID() != p.SpanContext.TraceID() {
				t.Errorf("job span's parent is %q, want a stream span of its trace", p.Name)
			}
			if s.StartTime.Before(p.StartTime) || s.EndTime.After(p.EndTime) {
				t.Errorf("job %v..%v outside its stream %v..%v", s.StartTime, s.EndTime, p.StartTime, p.EndTime)
			}
			jobsIn[p.SpanContext.SpanID()]++
		case "queue":
			queues++
			if s.EndTime.Sub(s.StartTime) != time.Millisecond {
				t.Errorf("queue span of %v, want 1ms", s.EndTime.Sub(s.StartTime))
			}
		}
	}
	if jobsIn[streams[0].SpanContext.SpanID()]+jobsIn[streams[1].SpanContext.SpanID()] != 5 ||
		jobsIn[streams[0].SpanContext.SpanID()]*jobsIn[streams[1].SpanContext.SpanID()] != 6 {
		t.Errorf("jobs per stream: %v, want 3 and 2", jobsIn)
	}
	if queues != 5*8 {
		t.Errorf("%d queue spans, want 40", queues)
	}
}

func TestGroupWait(t *testing.T) {
	tr, exp := start(t, Config{Group: 4, GroupWait: 50 * time.Millisecond})
	defer tr.Close(context.Background())
	t0 := time.Now()
	tr.Record(fakeJob("a", t0, 0, 0, time.Millisecond))
	tr.Record(fakeJob("b", t0, time.Millisecond, 0, time.Millisecond))
	tr.provider.ForceFlush(context.Background())
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans before the group is full or has waited", n)
	}
	// The partial group goes out once GroupWait has passed: wait for its
	// stream span (polling, not a fixed sleep: a loaded machine may be late).
	hasStream := func() bool {
		tr.provider.ForceFlush(context.Background())
		for _, s := range exp.GetSpans() {
			if s.Name == "stream" {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); !hasStream(); {
		if time.Now().After(deadline) {
			t.Fatal("no stream span 10 s after a GroupWait of 50 ms")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if waited := time.Since(t0); waited < 50*time.Millisecond {
		t.Errorf("the partial group went out after %v, before its GroupWait of 50 ms", waited)
	}
	streams := 0
	for _, s := range exp.GetSpans() {
		if s.Name == "stream" {
			streams++
			if v, _ := attr(s, "zkpipe.jobs"); v.AsInt64() != 2 {
				t.Errorf("partial group of %v jobs, want 2", v)
			}
		}
	}
	if streams != 1 {
		t.Fatalf("%d stream spans after GroupWait, want the partial group's", streams)
	}
}

// discard is an exporter that drops everything, so that the benchmark
// measures Record and the batcher, not an exporter.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkRecord is the cost per job in the result sink: "off" is what a
// run without an endpoint pays (a nil check; the command does not even
// install the hook), "on" makes the 9 spans and queues them for export.
func BenchmarkRecord(b *testing.B) {
	j := fakeJob("bench", time.Now(), 0, time.Millisecond, time.Millisecond)
	b.Run("off", func(b *testing.B) {
		var tr *Tracer
		for b.Loop() {
			tr.Record(j)
		}
	})
	b.Run("on", func(b *testing.B) {
		tr, err := Start(context.Background(), Config{Exporter: discard{}, Backend: "cpu"})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			tr.Record(j)
		}
		b.StopTimer()
		tr.Close(context.Background())
	})
}

// A request of partitions is one trace: a "request" span over its
// partitions' time, parent of each partition's job span (whose stage spans
// stay under it); a failed partition marks the request failed.
func TestRequestSpanParentsItsPartitions(t *testing.T) {
	tr, exp := start(t, Config{})
	t0 := time.Now()
	var parts []Job
	for i := range 3 {
		parts = append(parts, fakeJob(fmt.Sprintf("r1/%d", i), t0, time.Duration(i)*time.Millisecond, time.Millisecond, 2*time.Millisecond))
	}
	parts[1].Timings = parts[1].Timings[:2]
	parts[1].Err, parts[1].FailedStage = errors.New("synthesize: unsatisfied"), "synthesize"
	single := fakeJob("j1", t0, 0, 0, time.Millisecond)
	tr.Record(Job{ID: "r1", Circuit: "mulchain", Partitions: parts, Err: errors.New("partition 1 of 3 failed")})
	tr.Record(single)
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	var request *tracetest.SpanStub
	jobs := map[string]tracetest.SpanStub{}
	for i, s := range spans {
		switch s.Name {
		case "request":
			if request != nil {
				t.Fatal("two request spans")
			}
			request = &spans[i]
		case "job":
			id, _ := attr(s, "zkpipe.job.id")
			jobs[id.AsString()] = s
		}
	}
	if request == nil {
		t.Fatal("no request span")
	}
	if request.Parent.IsValid() {
		t.Error("the request span has a parent")
	}
	if v, _ := attr(*request, "zkpipe.request.id"); v.AsString() != "r1" {
		t.Errorf("request id %v", v)
	}
	if v, _ := attr(*request, "zkpipe.partitions"); v.AsInt64() != 3 {
		t.Errorf("partitions %v", v)
	}
	if v, _ := attr(*request, "zkpipe.failed_partitions"); v.AsInt64() != 1 {
		t.Errorf("failed partitions %v", v)
	}
	if request.Status.Code != codes.Error {
		t.Errorf("request status %v, want an error", request.Status)
	}
	last := parts[2].Timings[7].Finished
	if !request.StartTime.Equal(parts[0].Timings[0].Queued) || !request.EndTime.Equal(last) {
		t.Errorf("request span %v..%v, want %v..%v", request.StartTime, request.EndTime, parts[0].Timings[0].Queued, last)
	}
	for i := range 3 {
		id := fmt.Sprintf("r1/%d", i)
		j, ok := jobs[id]
		if !ok {
			t.Fatalf("no job span for %s", id)
		}
		if j.Parent.SpanID() != request.SpanContext.SpanID() || j.SpanContext.TraceID() != request.SpanContext.TraceID() {
			t.Errorf("job %s: parent %v, want the request span %v", id, j.Parent.SpanID(), request.SpanContext.SpanID())
		}
	}
	if jobs["j1"].Parent.IsValid() || jobs["j1"].SpanContext.TraceID() == request.SpanContext.TraceID() {
		t.Error("a single job's span is under the request")
	}
	// 1 request + 3 jobs (8 + 2 + 8 stages) + 1 job (8 stages)
	if len(spans) != 1+3+18+1+8 {
		t.Errorf("%d spans, want %d", len(spans), 1+3+18+1+8)
	}
}
