// Package tracing exports a proof stream's stage times as OpenTelemetry
// traces over OTLP (to Jaeger, Tempo or any collector).
//
// Spans are made after the fact: when a job leaves the pipeline, Record
// turns the times the pipeline stamped (pipeline.Timing: queued, started,
// finished, worker) into spans with explicit timestamps. Nothing runs on the
// hot path, and a job's spans are exact even though they are emitted late.
//
// The spans of one job:
//
//	job                 from entering parse's queue to leaving the last stage
//	├─ parse            one span per stage reached, named after the stage,
//	├─ synthesize       covering only the stage's Run: the gap before a stage
//	├─ …                span is the job's wait in that stage's queue (and in
//	└─ assemble         admission), also in its zkpipe.queue_ms attribute
//
// Attributes: zkpipe.job.id, zkpipe.circuit, zkpipe.constraints,
// zkpipe.device, zkpipe.reserved_bytes and zkpipe.queue_ms (total wait) on
// the job; zkpipe.stage, zkpipe.worker, zkpipe.queue_ms and, where the stage
// runs on a device, zkpipe.device on each stage. A failed job's span and its
// failed stage's span have status Error and the error as an event.
// Config.QueueSpans adds a "queue" span before each stage that waited.
//
// By default every job is its own trace. With Config.Group = N, N
// consecutive jobs (in the order they finish) become children of one
// "stream" span, so a single trace view shows their stages side by side.
//
// The resource names service.name=zkpipe, host.name and zkpipe.backend;
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are honoured.
package tracing
