package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Intake: the places of parse and synthesize (workers and queues, as the
// shape has them) and the jobs of the run gone through them, the one that
// failed at parse included; the later stages' places are not counted.
func TestIntakeCountsTheFirstStages(t *testing.T) {
	o := cpuOptions(filepath.Join(t.TempDir(), "out"))
	o.Shapes = map[string]stages.Shape{
		stages.Parse: {Workers: 1, Queue: 1}, stages.Synthesize: {Workers: 2, Queue: 3}, stages.MSMH: {Workers: 3, Queue: 9},
	}
	e, err := New(context.Background(), o, loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if places, through := e.Intake(); places != 7 || through != 0 {
		t.Errorf("before a run: %d places, %d through; want 7 (1+1 parse, 2+3 synthesize), 0", places, through)
	}
	jobs := make(chan stream.Line, 5)
	for i := range 4 {
		jobs <- stream.Line{Number: i + 1, Request: stream.Request{ID: "g" + string(rune('a'+i)), Generate: &stream.Generate{Seed: int64(i + 1)}}}
	}
	jobs <- stream.Line{Number: 5, Request: stream.Request{ID: "bad", Witness: "/nonexistent/w.witness"}}
	close(jobs)
	failed := 0
	err = e.Run(context.Background(), jobs, func(r stream.Result) error {
		if r.Error != "" {
			failed++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if places, through := e.Intake(); places != 7 || through != 5 || failed != 1 {
		t.Errorf("after 5 jobs (%d failed): %d places, %d through; want 7, 5", failed, places, through)
	}
}
