package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
	"github.com/zkpipe/zkpipe/tracing"
)

var _ = registerProveHook(proveHook{flags: tracingFlags(), setup: setupTracing})

func tracingFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "otlp-endpoint", Category: "tracing",
			Usage: "send OpenTelemetry traces to this OTLP collector, e.g. http://localhost:4317 (grpc) or http://localhost:4318 (http); " +
				"unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, else tracing is off",
			EnvVars: env("otlp-endpoint")},
		&cli.StringFlag{Name: "otlp-protocol", Value: "grpc", Category: "tracing",
			Usage:   "OTLP transport: grpc or http (http/protobuf)",
			EnvVars: append(env("otlp-protocol"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")},
		&cli.IntFlag{Name: "trace-group", Category: "tracing",
			Usage:   "put N consecutive jobs in one trace, under a \"stream\" span (0: one trace per job)",
			EnvVars: env("trace-group")},
		&cli.BoolFlag{Name: "trace-queue-spans", Category: "tracing",
			Usage:   "add a \"queue\" span for each stage's wait (it is always in the zkpipe.queue_ms attribute)",
			EnvVars: env("trace-queue-spans")},
	}
}

// setupTracing starts the exporter when an endpoint is set and records every
// finished job's spans from its result hook; without one it installs nothing.
func setupTracing(c *cli.Context, run *proveRun) (func(), error) {
	// The stages that run on a compute device, and which one.
	dev, g2 := run.cfg.Backend.Name(), dev2(run)
	cfg := tracing.Config{
		Endpoint:   c.String("otlp-endpoint"),
		Protocol:   c.String("otlp-protocol"),
		Group:      c.Int("trace-group"),
		QueueSpans: c.Bool("trace-queue-spans"),
		Backend:    dev,
		Devices: map[string]string{
			stages.Transfer: dev, stages.MSMH: dev, stages.BatchAdd: dev, stages.TailMSM: dev, stages.BG2: g2,
		},
	}
	if cfg.Group < 0 {
		return nil, fmt.Errorf("--trace-group %d: want 0 or more", cfg.Group)
	}
	tr, err := tracing.Start(c.Context, cfg)
	if err != nil || tr == nil {
		return nil, err
	}
	run.onResult = append(run.onResult, func(r pipeline.Result[*stages.Job], line *stream.Result) {
		constraints := 0
		if r.Job.Circuit != nil {
			constraints = r.Job.Circuit.Constraints
		}
		tr.Record(tracing.Job{
			ID: line.ID, Circuit: line.Circuit, Constraints: constraints,
			ReservedBytes: line.ReservedBytes,
			Timings:       r.Timings, Err: r.Err, FailedStage: r.Stage,
		})
	})
	return func() {
		// Bounded: an unreachable collector must not keep zkpipe from exiting.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tr.Close(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "zkpipe: tracing: last spans not delivered to %s within 10s: %v\n", collector(cfg), err)
		}
	}, nil
}

// collector names where spans go, for messages.
func collector(cfg tracing.Config) string {
	for _, e := range []string{cfg.Endpoint, os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")} {
		if e != "" {
			return e
		}
	}
	return "the collector"
}

// dev2 names the B_G2 stage's device.
func dev2(run *proveRun) string {
	if named, ok := run.cfg.G2.(interface{ Name() string }); ok {
		return named.Name()
	}
	return run.cfg.Backend.Name()
}
