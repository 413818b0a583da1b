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
	// A regular file ends without waiting: once stopped, the reader counts
	// what it leaves unread. A pipe's reader may be blocked for good in
	// r.Read, which nothing can wake: intake's end closes stage 1's input
	// without it (jobIntake.close), and Stream returns without waiting for it.
	regular := endsWithoutWaiting(r)
	readErr := make(chan error, 1)
	err := e.run(ctx, intake, func(in *jobIntake) {
		// The reader is the one goroutine before stage 1: each line it
		// reads becomes a job in the reading goroutine (jobIntake.take).
		go func() {
			readErr <- stream.ReadEach(intake, r, in.take, stream.ReadOptions{CountRest: regular})
			in.close() // after readErr: a run that this ends finds it there
		}()
	}, emit)
	if err != nil {
		return err
	}
	if intake.Err() == nil {
		// run ended with the reader: every line read was answered
		if err := <-readErr; err != nil {
			return fmt.Errorf("read jobs: %w", err)
		}
		return nil
	}
	d := &Drained{}
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
		// r ended before the reader saw the stop: every line was taken and
		// answered
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
