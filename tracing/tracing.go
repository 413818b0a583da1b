package tracing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/zkpipe/zkpipe/pipeline"
)

// Config is how a run is traced, resolved from flags by the command.
type Config struct {
	// Endpoint is the OTLP collector (Jaeger takes OTLP on 4317 for gRPC
	// and 4318 for HTTP): a URL such as http://localhost:4317, or a bare
	// host:port, which means plain http. For HTTP a URL without a path gets
	// /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does. Empty: tracing is off
	// unless EndpointFromEnv.
	Endpoint string
	// EndpointFromEnv turns tracing on with no Endpoint: the OTLP exporter
	// then takes its endpoint from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
	// OTEL_EXPORTER_OTLP_ENDPOINT, which the caller found set (the zkpipe
	// command looks; this package reads no variable itself).
	EndpointFromEnv bool
	// Disabled turns tracing off whatever the endpoints say, as
	// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none ask of the
	// zkpipe command.
	Disabled bool
	// Protocol is "grpc" (the default) or "http" ("http/protobuf").
	Protocol string

	// Backend and Devices name where the work ran: Backend is the compute
	// backend (resource attribute zkpipe.backend, and each job's device),
	// Devices the device of each stage that has one (stage name → device).
	Backend string
	Devices map[string]string

	// Group puts this many consecutive jobs under one "stream" span, so one
	// trace shows several proofs side by side. 0 or 1: one trace per job.
	Group int
	// GroupWait is how long a partial group waits for more jobs before it
	// is emitted anyway, so that a stream that pauses (jobs from a pipe
	// that stays open) still shows its last jobs. 0 means 30 s.
	GroupWait time.Duration
	// QueueSpans adds a "queue" span for each stage's wait (by default the
	// wait is the gap before the stage's span, and its zkpipe.queue_ms).
	QueueSpans bool

	// Exporter, if set, replaces the OTLP exporter (tests, benchmarks);
	// tracing is then on whatever Endpoint says.
	Exporter sdktrace.SpanExporter
}

// Enabled reports whether cfg turns tracing on: an exporter is given, or an
// endpoint (Endpoint, EndpointFromEnv) and tracing is not Disabled.
func (cfg Config) Enabled() bool {
	if cfg.Exporter != nil {
		return true
	}
	return !cfg.Disabled && (cfg.Endpoint != "" || cfg.EndpointFromEnv)
}

// Tracer turns finished jobs into spans. A nil *Tracer is tracing off: its
// methods do nothing.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	cfg      Config

	mu      sync.Mutex
	pending []Job       // the current group's jobs, until it is full
	flush   *time.Timer // emits a partial group that waited GroupWait
	groups  int         // groups emitted so far
}

// Start sets up OTLP export through a batching span processor and returns
// the tracer, or nil (and no error) when cfg does not turn tracing on. The
// caller must Close a non-nil Tracer to flush the last spans.
//
// Export never holds up a job: spans are made after the job has finished
// (Record), queued in memory (2048 by default, OTEL_BSP_MAX_QUEUE_SIZE) and
// sent in batches of up to 512 every 5 s (OTEL_BSP_*) from the batcher's
// goroutine; when the queue is full, spans are dropped rather than waited for.
func Start(ctx context.Context, cfg Config) (*Tracer, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	exp := cfg.Exporter
	if exp == nil {
		var err error
		if exp, err = exporter(ctx, cfg); err != nil {
			return nil, err
		}
	}
	res, err := newResource(ctx, cfg.Backend)
	if err != nil {
		return nil, err
	}
	// The sampler is ParentBased(AlwaysSample) unless OTEL_TRACES_SAMPLER
	// says otherwise: a stream of proofs makes few spans (9 per job).
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
	)
	return &Tracer{provider: tp, tracer: tp.Tracer("github.com/zkpipe/zkpipe/tracing"), cfg: cfg}, nil
}

// exporter makes the OTLP exporter for cfg's protocol. The standard
// OTEL_EXPORTER_OTLP_* variables (headers, timeout, certificates,
// compression, and the endpoint when cfg has none) are read by the exporter.
func exporter(ctx context.Context, cfg Config) (sdktrace.SpanExporter, error) {
	endpoint := cfg.Endpoint
	if endpoint != "" && !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	var u *url.URL
	if endpoint != "" {
		var err error
		if u, err = url.Parse(endpoint); err != nil || u.Host == "" {
			return nil, fmt.Errorf("otlp endpoint %q: want a URL such as http://localhost:4317 or host:port", cfg.Endpoint)
		}
	}
	switch p := strings.ToLower(cfg.Protocol); p {
	case "", "grpc":
		var opts []otlptracegrpc.Option
		if u != nil {
			opts = append(opts, otlptracegrpc.WithEndpointURL(u.String()))
		}
		return otlptracegrpc.New(ctx, opts...)
	case "http", "http/protobuf":
		var opts []otlptracehttp.Option
		if u != nil {
			if u.Path == "" || u.Path == "/" {
				u.Path = "/v1/traces"
			}
			opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		}
		return otlptracehttp.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("otlp protocol %q: want grpc or http", cfg.Protocol)
	}
}

// newResource names the service zkpipe, its host and its backend;
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES may override or add.
func newResource(ctx context.Context, backend string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", "zkpipe")}
	if backend != "" {
		attrs = append(attrs, attribute.String("zkpipe.backend", backend))
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attrs...),
		resource.WithHost(),
		resource.WithProcessPID(),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // last, so that the variables win
	)
	if errors.Is(err, resource.ErrPartialResource) {
		err = nil // a detector failed (say, no hostname): keep the rest
	}
	return res, err
}

// Job is what Record needs of a finished or failed job: its outcome and the
// times the pipeline recorded for each stage it reached.
type Job struct {
	ID            string
	Circuit       string
	Constraints   int
	ReservedBytes int64
	Timings       []pipeline.Timing // in stage order
	Err           error             // nil when the proof was written
	FailedStage   string
	// Device is the device its device stages ran on when the backend has
	// several ("cuda:1"); it then names the device of the job and of each
	// stage that Config.Devices gives the backend's name.
	Device string
	// Partitions make j a request of partitions (ID its request id, no
	// Timings of its own): a "request" span from its first partition's
	// arrival to its last one's end, parent of each partition's job span.
	Partitions []Job
}

// bounds are j's first arrival and last end, and false when it reached no
// stage (a request: over its partitions).
func (j Job) bounds() (start, end time.Time, ok bool) {
	if len(j.Partitions) == 0 {
		if len(j.Timings) == 0 {
			return time.Time{}, time.Time{}, false
		}
		return j.Timings[0].Queued, j.Timings[len(j.Timings)-1].Finished, true
	}
	for _, p := range j.Partitions {
		s, e, pok := p.bounds()
		if !pok {
			continue
		}
		if !ok {
			start, end, ok = s, e, true
		}
		start, end = minTime(start, s), maxTime(end, e)
	}
	return start, end, ok
}

// Record makes the spans of j. With Group > 1 they wait until Group jobs
// have finished (or GroupWait has passed, or Close), so that the stream span
// can span them all.
// Safe for concurrent use; it does no I/O and costs some tens of µs a job
// (BenchmarkRecord: 44 µs on this 2-vCPU machine, against ~100 ms a proof).
func (t *Tracer) Record(j Job) {
	if t == nil {
		return
	}
	if _, _, ok := j.bounds(); !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cfg.Group <= 1 {
		t.emitJob(context.Background(), j)
		return
	}
	t.pending = append(t.pending, j)
	if len(t.pending) >= t.cfg.Group {
		t.emitGroup()
		return
	}
	if len(t.pending) == 1 {
		wait := t.cfg.GroupWait
		if wait <= 0 {
			wait = 30 * time.Second
		}
		group := t.groups
		t.flush = time.AfterFunc(wait, func() { t.flushPartial(group) })
	}
}

// flushPartial emits group number group if it is still pending (its timer
// may fire just as the group fills).
func (t *Tracer) flushPartial(group int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.groups == group && len(t.pending) > 0 {
		t.emitGroup()
	}
}

// Close emits a partial group, then flushes and stops the exporter, waiting
// at most until ctx ends.
func (t *Tracer) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	if len(t.pending) > 0 {
		t.emitGroup()
	}
	t.mu.Unlock()
	return t.provider.Shutdown(ctx)
}

// emitGroup makes a "stream" span from the first of its jobs' arrival to the
// last one's end, and the jobs' spans under it. Called with t.mu held.
func (t *Tracer) emitGroup() {
	jobs := t.pending
	t.pending = nil
	if t.flush != nil {
		t.flush.Stop()
		t.flush = nil
	}
	start, end, _ := jobs[0].bounds()
	failed := 0
	for _, j := range jobs {
		s, e, _ := j.bounds()
		start, end = minTime(start, s), maxTime(end, e)
		if j.Err != nil {
			failed++
		}
	}
	ctx, span := t.tracer.Start(context.Background(), "stream",
		trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.Int("zkpipe.group", t.groups),
			attribute.Int("zkpipe.jobs", len(jobs)),
			attribute.Int("zkpipe.failed_jobs", failed),
			attribute.String("zkpipe.first_job", jobs[0].ID),
		))
	t.groups++
	for _, j := range jobs {
		t.emitJob(ctx, j)
	}
	if failed > 0 {
		span.SetStatus(codes.Error, fmt.Sprintf("%d of %d jobs failed", failed, len(jobs)))
	}
	span.End(trace.WithTimestamp(end))
}

// emitJob makes the span of one job, from entering parse's queue to leaving
// its last stage, and a child span per stage covering that stage's Run.
func (t *Tracer) emitJob(parent context.Context, j Job) {
	if len(j.Partitions) > 0 {
		t.emitRequest(parent, j)
		return
	}
	first, last := j.Timings[0], j.Timings[len(j.Timings)-1]
	var wait time.Duration
	for _, s := range j.Timings {
		wait += s.Wait()
	}
	attrs := []attribute.KeyValue{
		attribute.String("zkpipe.job.id", j.ID),
		attribute.String("zkpipe.circuit", j.Circuit),
		attribute.Int("zkpipe.constraints", j.Constraints),
		attribute.String("zkpipe.device", cmp.Or(j.Device, t.cfg.Backend)),
		attribute.Int64("zkpipe.reserved_bytes", j.ReservedBytes),
		attribute.Float64("zkpipe.queue_ms", ms(wait)),
	}
	if j.Err != nil {
		attrs = append(attrs, attribute.String("zkpipe.failed_stage", j.FailedStage))
	}
	ctx, span := t.tracer.Start(parent, "job", trace.WithTimestamp(first.Queued), trace.WithAttributes(attrs...))
	for _, s := range j.Timings {
		if t.cfg.QueueSpans && s.Started.After(s.Queued) {
			_, q := t.tracer.Start(ctx, "queue", trace.WithTimestamp(s.Queued), trace.WithAttributes(
				attribute.String("zkpipe.job.id", j.ID),
				attribute.String("zkpipe.stage", s.Stage),
			))
			q.End(trace.WithTimestamp(s.Started))
		}
		sattrs := []attribute.KeyValue{
			attribute.String("zkpipe.job.id", j.ID),
			attribute.String("zkpipe.stage", s.Stage),
			attribute.Int("zkpipe.worker", s.Worker),
			attribute.Float64("zkpipe.queue_ms", ms(s.Wait())),
		}
		if d := t.cfg.Devices[s.Stage]; d != "" {
			if d == t.cfg.Backend && j.Device != "" {
				d = j.Device
			}
			sattrs = append(sattrs, attribute.String("zkpipe.device", d))
		}
		_, ss := t.tracer.Start(ctx, s.Stage, trace.WithTimestamp(s.Started), trace.WithAttributes(sattrs...))
		if j.Err != nil && s.Stage == j.FailedStage {
			ss.RecordError(j.Err, trace.WithTimestamp(s.Finished))
			ss.SetStatus(codes.Error, j.Err.Error())
		}
		ss.End(trace.WithTimestamp(s.Finished))
	}
	if j.Err != nil {
		span.RecordError(j.Err, trace.WithTimestamp(last.Finished))
		span.SetStatus(codes.Error, j.Err.Error())
	}
	span.End(trace.WithTimestamp(last.Finished))
}

// emitRequest makes a request of partitions' span, from its first
// partition's arrival to its last one's end, and each partition's job span
// under it (a partition that reached no stage has none).
func (t *Tracer) emitRequest(parent context.Context, j Job) {
	start, end, _ := j.bounds()
	failed := 0
	for _, p := range j.Partitions {
		if p.Err != nil {
			failed++
		}
	}
	ctx, span := t.tracer.Start(parent, "request", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("zkpipe.request.id", j.ID),
		attribute.String("zkpipe.circuit", j.Circuit),
		attribute.Int("zkpipe.partitions", len(j.Partitions)),
		attribute.Int("zkpipe.failed_partitions", failed),
	))
	for _, p := range j.Partitions {
		if len(p.Timings) > 0 {
			t.emitJob(ctx, p)
		}
	}
	if j.Err != nil {
		span.RecordError(j.Err, trace.WithTimestamp(end))
		span.SetStatus(codes.Error, j.Err.Error())
	}
	span.End(trace.WithTimestamp(end))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
