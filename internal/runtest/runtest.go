// Package runtest runs job streams through the engine for the tests of
// several packages: provertest's (built-in circuits, whose keys come from
// keygen) and those of packages keygen itself imports (circomsrc), which
// cannot import provertest.
package runtest

import (
	"context"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Config is a small engine configuration on the CPU backend
// (gpu.NewCPU(2, 2)): every stage with the given workers and queue,
// writing into dir.
func Config(dir string, workers, queue int) engine.CoreConfig {
	cpu := gpu.NewCPU(2, 2)
	cfg := engine.CoreConfig{Shapes: map[string]stages.Shape{}, Backend: cpu, G2: cpu, Out: blob.Dir(dir)}
	for _, n := range stages.Names {
		cfg.Shapes[n] = stages.Shape{Workers: workers, Queue: queue}
	}
	return cfg
}

// Run proves jobs with cfg and circuits and returns the result lines in the
// order they finished, failing the test if the stream itself fails or never
// ends. timeout is the stream's deadline, or the test binary's own (go test
// -timeout) less a minute when that is later: a machine three times slower
// than usual, or busy with other work, must not fail a test that proves
// correctly; only a stream that hangs does, with its error, before go test
// kills the binary.
func Run(t testing.TB, cfg engine.CoreConfig, circuits []*stages.Circuit, jobs []*stages.Job, timeout time.Duration) []stream.Result {
	t.Helper()
	eng, err := engine.NewCore(cfg, circuits...)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok && end.Add(-time.Minute).After(deadline) {
			deadline = end.Add(-time.Minute)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	src := make(chan *stages.Job)
	go func() {
		defer close(src)
		for _, j := range jobs {
			select {
			case src <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	var out []stream.Result
	if err := eng.Run(ctx, eng.Pipeline(nil), src, func(r engine.CoreResult) {
		out = append(out, r.Line)
	}); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return out
}
