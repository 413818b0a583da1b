package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A write that finds the store's disk full breaks its stream in
// nats-server 2.15 ("critical write error": the stream takes nothing more,
// publishes go unanswered until their timeout) or stops JetStream ("out of
// resources, will be DISABLED"), and nothing mends it short of a restart.
// The embedded server's watcher says why (StoreProblem, serve's log, the
// answer on statusSubject) and, once the disk has room again, restarts
// JetStream in the same process: the streams are recovered from the store.

// statusSubject is a plain NATS subject serve answers with the store's
// problem ("" when none), for clients whose JetStream calls go unanswered.
const statusSubject = "zkpipe.store.status"

// minFreeToRestart is the room the store's disk needs before JetStream is
// restarted: enough that recovery (which writes index files) does not fill
// it at once.
const minFreeToRestart = 4 << 20

// watchInterval is how often the watcher asks the server's health: it
// tells no one in-process of a write error.
const watchInterval = 500 * time.Millisecond

// watchStore runs until the server stops.
func (s *Server) watchStore(log io.Writer, cfg server.JetStreamConfig) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if !s.Running() {
			continue
		}
		broken, why := s.storeBroken()
		if !broken {
			continue
		}
		free, ferr := freeBytes(s.storeDir)
		if s.StoreProblem() == "" {
			p := fmt.Sprintf("JetStream cannot write its store %s (%s)", s.storeDir, why)
			if strings.Contains(why, "no space left") || ferr == nil && free < minFreeToRestart {
				p = fmt.Sprintf("store disk full: %s has %s free (%s)", s.storeDir, bytesString(free), why)
			}
			s.problem.Store(p)
			fmt.Fprintf(log, "zkpipe: serve: %s; JetStream restarts when the disk has %s free\n", p, bytesString(minFreeToRestart))
		}
		if ferr != nil || free < minFreeToRestart {
			continue
		}
		if s.JetStreamEnabled() {
			if err := s.ShutdownJetStream(); err != nil {
				fmt.Fprintf(log, "zkpipe: serve: stop JetStream: %v\n", err)
				continue
			}
		}
		c := cfg
		if err := s.EnableJetStream(&c); err != nil {
			fmt.Fprintf(log, "zkpipe: serve: start JetStream again: %v\n", err)
			continue
		}
		// The streams are recovered from the store as JetStream starts;
		// say the store is back (healthz, statusSubject) only once the
		// server's own health check finds them sound.
		s.awaitHealthy(30 * time.Second)
		s.problem.Store("")
		fmt.Fprintf(log, "zkpipe: serve: store %s has room again (%s free): JetStream started again\n", s.storeDir, bytesString(free))
	}
}

// awaitHealthy waits, at most max, until the server's health check passes.
func (s *Server) awaitHealthy(max time.Duration) {
	for end := time.Now().Add(max); time.Now().Before(end); {
		if h := s.Healthz(&server.HealthzOptions{}); h == nil || h.Error == "" {
			return
		}
		select {
		case <-s.stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// storeBroken reports whether JetStream is stopped or a stream has met a
// write error, which only a restart of JetStream clears.
func (s *Server) storeBroken() (bool, string) {
	if !s.JetStreamEnabled() {
		return true, "JetStream stopped"
	}
	h := s.Healthz(&server.HealthzOptions{})
	if h != nil && h.Error != "" && strings.Contains(h.Error, "write error") {
		return true, h.Error
	}
	return false, ""
}

// StoreProblem is why the store takes nothing now ("store disk full: …"),
// or "".
func (s *Server) StoreProblem() string {
	p, _ := s.problem.Load().(string)
	return p
}

// AnswerStatus answers statusSubject on c with the store's problem, so
// that submit and workers elsewhere can say why the store does not answer.
func (s *Server) AnswerStatus(c *Conn) (*nats.Subscription, error) {
	return c.NC.Subscribe(statusSubject, func(m *nats.Msg) { m.Respond([]byte(s.StoreProblem())) })
}

func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

func bytesString(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// jsInsufficientResources is JetStream's error code for a store at its
// limits (its max_file_store, or the account's).
const jsInsufficientResources = 10023

// Explain adds to err, a JetStream call that failed, why the store fails
// when that is known: serve's answer on statusSubject ("store disk full:
// …"), or JetStream's own insufficient resources. Other errors are
// returned as they are.
func (q *Queue) Explain(err error) error { return q.Conn.Explain(err) }

// Explain is Queue.Explain before the queue is open (Setup's errors).
func (c *Conn) Explain(err error) error {
	if err == nil {
		return nil
	}
	var api *jetstream.APIError
	if errors.As(err, &api) && api.ErrorCode == jsInsufficientResources {
		return fmt.Errorf("store disk full (JetStream: insufficient resources): %w", err)
	}
	if !(errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) ||
		errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeJetStreamNotEnabled) {
		return err
	}
	m, rerr := c.NC.Request(statusSubject, nil, 2*time.Second)
	if rerr != nil || len(m.Data) == 0 {
		return err
	}
	return fmt.Errorf("%s: %w", m.Data, err)
}
