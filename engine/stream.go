package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/zkpipe/zkpipe/stream"
)

// Drained is Stream's error when intake ended before the jobs did: the jobs
// read were answered, but Unread job lines were never read (counted to the
// end of a regular file; for a pipe, whose writer may send more, Counted is
// false and Unread is the least it can be).
type Drained struct {
	Unread  int
	Counted bool
}

func (d *Drained) Error() string {
	if d.Counted {
		return fmt.Sprintf("%d job(s) not read", d.Unread)
	}
	return fmt.Sprintf("jobs not read: at least %d, and the rest of the input (a pipe, not counted)", d.Unread)
}

// Stream proves the jobs read from r, JSON Lines as they arrive (a pipe may
// stay open for hours), and hands each result line to emit; see Run.
// Cancelling intake stops reading new jobs and lets those in flight finish
// (a first Ctrl-C); cancelling ctx cancels them too (a second). An intake
// that ends before r does returns a *Drained: nil means every job of r was
// read and answered.
func (e *Engine) Stream(ctx, intake context.Context, r io.Reader, emit func(stream.Result) error) error {
	// fwd ends the reader and the forwarder when Stream returns, however it
	// returns (a reader blocked inside r.Read itself cannot be woken).
	fwd, stopFwd := context.WithCancel(intake)
	defer stopFwd()
	// A regular file ends without waiting: once stopped, the reader counts
	// what it leaves unread. A pipe's reader may be blocked for good.
	regular := endsWithoutWaiting(r)
	lines := make(chan stream.Line)
	readErr := make(chan error, 1)
	go func() { readErr <- stream.ReadWith(fwd, r, lines, stream.ReadOptions{CountRest: regular}) }()
	jobs := make(chan stream.Line)
	// dropped: a line read, not forwarded; ended: the reader closed lines.
	// Both are the forwarder's until fwdDone closes.
	var dropped int
	var ended bool
	fwdDone := make(chan struct{})
	go func() {
		defer close(fwdDone)
		defer close(jobs)
		for {
			// A read blocked on an open pipe cannot be interrupted: stop
			// forwarding on intake's end instead, and let it go.
			select {
			case l, ok := <-lines:
				if !ok {
					ended = true
					return
				}
				select {
				case jobs <- l:
				case <-fwd.Done():
					dropped++
					return
				}
			case <-fwd.Done():
				return
			}
		}
	}()
	if err := e.run(ctx, intake, jobs, emit); err != nil {
		return err
	}
	<-fwdDone // jobs is closed: Run has returned only after that
	if intake.Err() == nil || ended {
		if err := <-readErr; err != nil {
			return fmt.Errorf("read jobs: %w", err)
		}
		return nil
	}
	stopFwd()
	d := &Drained{Unread: dropped}
	var err error
	if regular {
		err = <-readErr
	} else {
		select {
		case err = <-readErr:
		default:
			return d // the reader may be blocked for good
		}
	}
	var st *stream.Stopped
	switch {
	case err == nil:
		// r ended before the reader saw the stop: every line was sent,
		// and all but the dropped ones were answered
	case errors.As(err, &st):
		d.Unread += st.Unread
		if !st.Counted {
			return d
		}
	default:
		return fmt.Errorf("read jobs: %w", err)
	}
	d.Counted = true
	if d.Unread == 0 {
		return nil
	}
	return d
}

// endsWithoutWaiting reports whether reading r to its end waits for no one:
// a regular file or bytes in memory, not a pipe, a FIFO, a terminal or a
// socket.
func endsWithoutWaiting(r io.Reader) bool {
	switch r := r.(type) {
	case *strings.Reader, *bytes.Reader:
		return true
	case *os.File:
		st, err := r.Stat()
		return err == nil && st.Mode().IsRegular()
	}
	return false
}
