package engine

import (
	"context"
	"fmt"
	"io"

	"github.com/zkpipe/zkpipe/stream"
)

// Stream proves the jobs read from r, JSON Lines as they arrive (a pipe may
// stay open for hours), and hands each result line to emit; see Run.
// Cancelling intake stops reading new jobs and lets those in flight finish
// (a first Ctrl-C); cancelling ctx cancels them too (a second).
func (e *Engine) Stream(ctx, intake context.Context, r io.Reader, emit func(stream.Result) error) error {
	// fwd ends the reader and the forwarder when Stream returns, however it
	// returns (a reader blocked inside r.Read itself cannot be woken).
	fwd, stopFwd := context.WithCancel(intake)
	defer stopFwd()
	lines := make(chan stream.Line)
	readErr := make(chan error, 1)
	go func() { readErr <- stream.Read(fwd, r, lines) }()
	jobs := make(chan stream.Line)
	go func() {
		defer close(jobs)
		for {
			// A read blocked on an open pipe cannot be interrupted: stop
			// forwarding on intake's end instead, and let it go.
			select {
			case l, ok := <-lines:
				if !ok {
					return
				}
				select {
				case jobs <- l:
				case <-fwd.Done():
					return
				}
			case <-fwd.Done():
				return
			}
		}
	}()
	if err := e.Run(ctx, jobs, emit); err != nil {
		return err
	}
	if intake.Err() != nil {
		return nil // stopped by the caller; the reader may still be blocked
	}
	if err := <-readErr; err != nil {
		return fmt.Errorf("read jobs: %w", err)
	}
	return nil
}
