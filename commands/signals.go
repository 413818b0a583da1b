package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// abortGrace is how long a second signal waits for the stream to unwind
// before the process exits regardless: a read blocked in the kernel must
// not keep zkpipe alive.
const abortGrace = 2 * time.Second

// signals are a run's two contexts: intake ends at the first SIGINT or
// SIGTERM (stop reading jobs, finish those in flight), hard at the second
// (cancel the jobs in flight).
type signals struct {
	hard, intake context.Context
	stop         func()
	abort        atomic.Bool
}

func (s *signals) aborted() bool { return s.abort.Load() }

func watchSignals(parent context.Context, log io.Writer) *signals {
	hard, cancelHard := context.WithCancel(parent)
	intake, stopIntake := context.WithCancel(hard)
	s := &signals{hard: hard, intake: intake}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	s.stop = func() {
		signal.Stop(ch)
		close(done)
		stopIntake()
		cancelHard()
	}
	go func() {
		select {
		case <-ch:
			fmt.Fprintln(log, "zkpipe: stopping intake; finishing jobs in flight (again to abort)")
			stopIntake()
		case <-done:
			return
		}
		select {
		case <-ch:
			fmt.Fprintln(log, "zkpipe: aborting the jobs in flight")
			s.abort.Store(true)
			cancelHard()
		case <-done:
			return
		}
		select {
		case <-time.After(abortGrace):
			fmt.Fprintf(log, "zkpipe: still unwinding %s after the second signal; exiting\n", abortGrace)
			os.Exit(ExitInterrupted)
		case <-ch:
			os.Exit(ExitInterrupted)
		case <-done:
		}
	}()
	return s
}
