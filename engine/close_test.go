package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/stream"
)

// TestMethodsAfterCloseAreSafe: a metrics scrape or a status line may come
// after (or while) the engine closes. Snapshot keeps the counts and reports
// no memory; AddCircuit and Run refuse with ErrClosed; nothing panics, and
// under -race nothing races with Close.
func TestMethodsAfterCloseAreSafe(t *testing.T) {
	e, err := New(context.Background(), cpuOptions(t.TempDir()), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	var lines []stream.Result
	if err := e.Run(context.Background(), generated("c", 2), func(r stream.Result) error {
		lines = append(lines, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// scrapes and lookups while Close runs
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = e.Snapshot()
				_ = e.HasCircuit("chain")
				_ = e.Circuits()
				_ = e.Capacity()
			}
		}()
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()

	s := e.Snapshot()
	if s.Proved != 2 || s.Memory.Budget != 0 || s.Stages != nil {
		t.Errorf("Snapshot after Close: %+v; want 2 proved, no memory, no stages", s)
	}
	if e.HasCircuit("chain") || len(e.Circuits()) != 0 {
		t.Error("a closed engine still lists circuits")
	}
	if err := e.AddCircuit(loadChain(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("AddCircuit after Close: %v, want ErrClosed", err)
	}
	e2, err := New(context.Background(), cpuOptions(t.TempDir()), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	e2.Close()
	if err := e2.Run(context.Background(), generated("d", 1), func(stream.Result) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestCloseStopsARun: Close while Run waits for jobs cancels the run and
// waits for it to return before releasing anything, rather than freeing
// keys and buffers under a running pipeline.
func TestCloseStopsARun(t *testing.T) {
	e, err := New(context.Background(), cpuOptions(t.TempDir()), loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	jobs := make(chan stream.Line, 1) // never closed: Run would wait for ever
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "r1", Generate: &stream.Generate{Seed: 1}}}
	first := make(chan struct{})
	ran := make(chan error, 1)
	go func() {
		ran <- e.Run(context.Background(), jobs, func(stream.Result) error {
			close(first)
			return nil
		})
	}()
	select {
	case <-first:
	case <-time.After(60 * time.Second):
		t.Fatal("no result within 60 s")
	}
	closed := make(chan error, 1)
	go func() { closed <- e.Close() }()
	select {
	case err := <-ran:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after Close: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not stop Run")
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
}
