package fleet

import (
	"context"
	"time"
)

// A JetStream cluster that loses a server elects new leaders for what the
// server led (its streams, consumers, the meta group) within seconds; in
// the meantime calls to them go unanswered (timeouts, no responders, 503).
// The fleet's writes are idempotent (a message id, an object's name, a
// key), so each is tried again through such a spell, within a bound:
// nothing blocks for ever, and a caller whose bound passes goes on as it
// did before (a worker hands the job back, submit fails).

// failoverWait bounds how long one call is tried again while JetStream
// does not answer: a leader election takes a few seconds; a minute covers
// a server restarting as well.
const failoverWait = time.Minute

// attemptTimeout bounds one try of a call that moves one message (a
// publish, an info, a key's update): one sent to a leader that has just
// died would otherwise wait out the client's default of 5 s before the
// next try, though a new leader may answer long before.
const attemptTimeout = 2 * time.Second

// retry calls f until it succeeds, fails otherwise than unavailable, ctx
// ends or wait has passed, backing off from 100 ms to a second; it returns
// f's last error (ctx's when ctx ended). f gets ctx.
func retry(ctx context.Context, wait time.Duration, f func(context.Context) error) error {
	return retryEach(ctx, wait, 0, f)
}

// retryQuick is retry for up to failoverWait, each try of f bounded by
// attemptTimeout: for calls that move one message, not a blob.
func retryQuick(ctx context.Context, f func(context.Context) error) error {
	return retryEach(ctx, failoverWait, attemptTimeout, f)
}

func retryEach(ctx context.Context, wait, each time.Duration, f func(context.Context) error) error {
	end := time.Now().Add(wait)
	delay := 100 * time.Millisecond
	for {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if each > 0 {
			actx, cancel = context.WithTimeout(ctx, each)
		}
		err := f(actx)
		cancel()
		if err == nil || !unavailable(err) || time.Now().After(end) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}
