package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/stream"
)

// Stream stopped by its intake after the first result: a *Drained whose
// count and the result lines add up to the input's jobs (a regular file),
// and nil for an intake that ends only after the input did.
func TestStreamDrainedCountsUnreadJobs(t *testing.T) {
	const n = 30
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":"j%d","generate":{"seed":%d}}`+"\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "jobs.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := New(context.Background(), cpuOptions(t.TempDir()), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	intake, stop := context.WithCancel(context.Background())
	answered := 0
	err = e.Stream(context.Background(), intake, f, func(stream.Result) error {
		answered++
		stop()
		return nil
	})
	var d *Drained
	if !errors.As(err, &d) || !d.Counted || answered+d.Unread != n || answered == n {
		t.Fatalf("Stream: %v (%+v), %d answered; want a counted drain adding up to %d", err, d, answered, n)
	}

	e2, err := New(context.Background(), cpuOptions(t.TempDir()), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	intake2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	got := 0
	if err := e2.Stream(context.Background(), intake2, strings.NewReader(b.String()), func(stream.Result) error {
		if got++; got == n {
			stop2() // every job read and answered
		}
		return nil
	}); err != nil || got != n {
		t.Errorf("Stream stopped after its last job: %v, %d answered", err, got)
	}
}
