package fleet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/stream"
)

// results --out D takes the lock zkpipe prove holds on D (engine.OpenOutDir,
// which Collect takes too, for as long as it runs: two results into one D
// meet the same lock): while it is held, Collect into D is refused; once
// it is released, Collect runs.
func TestResultsTakesTheOutDirLock(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	dir := t.TempDir()
	held, err := engine.OpenOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	noop := func(stream.Result) error { return nil }
	err = fleet.Collect(context.Background(), q, fleet.ResultsOptions{Out: dir}, noop)
	if !errors.Is(err, engine.ErrDirInUse) {
		t.Errorf("Collect into a held --out: %v, want %v", err, engine.ErrDirInUse)
	}
	held.Close()
	if err := fleet.Collect(context.Background(), q, fleet.ResultsOptions{Out: dir}, noop); err != nil {
		t.Errorf("Collect once the lock is released: %v", err)
	}
}
