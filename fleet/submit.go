package fleet

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/stream"
)

// validName is stream's rule for ids, which circuit names follow too: they
// name files, objects and subject tokens.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`).MatchString

// SubmitOptions configure Submit.
type SubmitOptions struct {
	Priority string // one of Priorities; "" is normal
	// Circuit is given to jobs that name none; when empty, such jobs get the
	// store's only circuit, and fail if it holds several.
	Circuit string
}

// Submitted is what became of one job line.
type Submitted struct {
	ID   string
	Line int
	// Queued: published; Duplicate: the server already had a job of this id
	// in its duplicate window; Done: a proof of this id is stored (zkpipe
	// results has it), so it was not queued again.
	Queued, Duplicate, Done bool
	Err                     error // a bad line, a missing witness: not queued
}

// Submit reads job lines from in (as prove reads them), uploads each job's
// witness file to the object store and queues the job at o.Priority, calling
// report once per line. It returns how many lines were refused, and an
// error only when the queue itself fails.
func Submit(ctx context.Context, q *Queue, in io.Reader, o SubmitOptions, report func(Submitted)) (refused int, err error) {
	if o.Priority == "" {
		o.Priority = "normal"
	}
	if !slices.Contains(Priorities, o.Priority) {
		return 0, fmt.Errorf("fleet.SubmitOptions.Priority %q: want one of %v", o.Priority, Priorities)
	}
	lines := make(chan stream.Line)
	readErr := make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { readErr <- stream.Read(ctx, in, lines) }()

	keys := newStoreKeys(q)
	shapes := map[string]witnessShape{} // by circuit, read on first need
	var stored []string                 // the store's circuits, listed on first need
	listed := false
	for l := range lines {
		s := Submitted{ID: l.Request.ID, Line: l.Number}
		if l.Err != nil {
			s.Err = l.Err
		} else if l.Request.IsPartitioned() {
			s.Err = fmt.Errorf("line %d: %w", l.Number, partitionsRefused(l.Request))
		} else {
			req := l.Request
			if req.Circuit == "" && o.Circuit != "" {
				req.Circuit = o.Circuit
			}
			if req.Circuit == "" {
				if !listed {
					if stored, err = Circuits(ctx, q); err != nil {
						return refused, err
					}
					listed = true
				}
				if len(stored) != 1 {
					s.Err = fmt.Errorf("line %d: job %s names no circuit and the store holds %d %v: name one (or fleet.SubmitOptions.Circuit)", l.Number, req.ID, len(stored), stored)
				} else {
					req.Circuit = stored[0]
				}
			}
			if s.Err == nil {
				s, err = submitOne(ctx, q, keys, shapes, req, l.Number, o.Priority)
				if err != nil {
					return refused, q.Explain(err) // "store disk full" when serve says so
				}
			}
		}
		if s.Err != nil {
			refused++
		}
		report(s)
	}
	if err := <-readErr; err != nil && !errors.Is(err, context.Canceled) {
		return refused, fmt.Errorf("read jobs: %w", err)
	}
	return refused, nil
}

// partitionsRefused is why the fleet takes no request of partitions: a
// worker answers a job with one stored result under one id, and a request's
// k proofs would each need the handling a job gets (witness objects, done
// checks, hand-backs) under the request's one message. Its partitions can
// be submitted as jobs of their own; zkpipe prove proves the request.
func partitionsRefused(req stream.Request) error {
	return fmt.Errorf("job %s: a request of partitions (%d): the fleet proves single jobs only; submit its partitions as jobs of their own (ids such as %s-0, %s-1, …), or prove the request with zkpipe prove",
		req.ID, len(req.Partitions), req.ID, req.ID)
}

// submitOne queues one valid request. Its error is the queue's; the job's
// own problems are in Submitted.Err.
func submitOne(ctx context.Context, q *Queue, keys *storeKeys, shapes map[string]witnessShape, req stream.Request, line int, priority string) (Submitted, error) {
	s := Submitted{ID: req.ID, Line: line}
	// A witness file is checked against its circuit before anything else:
	// only a file that is one of its witnesses (header and exact size) is
	// uploaded, not any file the job line names.
	var ws witnessShape
	if req.Witness != "" || req.Wtns != "" {
		var ok bool
		if ws, ok = shapes[req.Circuit]; !ok {
			var err error
			ws, err = keys.shape(ctx, req.Circuit)
			switch {
			case errors.Is(err, ErrNoCircuit) || errors.Is(err, ErrCircuitIncomplete) || errors.Is(err, errRejected):
				s.Err = fmt.Errorf("line %d: job %s: its witness cannot be checked against circuit %s: %w (push the circuit before its jobs)", line, req.ID, req.Circuit, err)
				return s, nil
			case err != nil:
				return s, fmt.Errorf("job %s: circuit %s: %w", req.ID, req.Circuit, err)
			}
			shapes[req.Circuit] = ws
		}
	}
	msgID := req.ID
	// Done already? A KV-like check on the proof store, beyond the server's
	// duplicate window; done only if the stored proof passes its circuit's
	// key and, for a witness or wtns job, is of this witness's public
	// inputs, since anyone with access to the queue can put outputs there.
	if info, err := q.Proofs.GetInfo(ctx, outputsObject(req.ID)); err == nil {
		err := storedProofValid(ctx, q, keys, req.ID, req.Circuit, statementOf(req))
		if err == nil {
			s.Done = true
			return s, nil
		}
		if !errors.Is(err, errRejected) && !errors.Is(err, errTooLarge) {
			return s, fmt.Errorf("job %s: %w", req.ID, err)
		}
		// queued again, under a message id of its own: the worker finds
		// the same outputs wanting, proves it and replaces them
		msgID = fmt.Sprintf("%s@unverified-%s", req.ID, info.NUID)
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return s, fmt.Errorf("job %s: %w", req.ID, err)
	}
	// A job that failed may be submitted again (a fixed witness, a circuit
	// pushed since): its message id names the failure it follows, so the
	// duplicate window drops a second resubmit but not the first.
	if msgID == req.ID {
		if last, err := q.Results.GetLastMsgForSubject(ctx, resultSubject(req.ID)); err == nil {
			var prev stream.Result
			if json.Unmarshal(last.Data, &prev) == nil && prev.Error != "" {
				msgID = fmt.Sprintf("%s@retry-%d", req.ID, last.Sequence)
			}
		} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return s, fmt.Errorf("job %s: %w", req.ID, err)
		}
	}
	var uploaded []string // removed again unless the job is queued
	for _, w := range []struct {
		path *string
		ext  string
	}{{&req.Witness, ".witness"}, {&req.Wtns, ".wtns"}} {
		if *w.path == "" {
			continue
		}
		f, size, err := openRegular(*w.path, "witness")
		if err == nil {
			if err = checkWitness(f, size, w.ext, ws); err != nil {
				f.Close()
				err = fmt.Errorf("%s %s: %w", w.ext[1:], *w.path, err)
			}
		}
		if err != nil {
			s.Err = fmt.Errorf("line %d: job %s: %w", line, req.ID, err)
			forget(ctx, q, uploaded)
			return s, nil
		}
		// A name of its own per upload (the id, then a nonce the id
		// cannot contain): a second submit of a queued id must not
		// overwrite the witness the queued job will read.
		name := req.ID + "@" + rand.Text() + w.ext
		// no more than fstat said: a file that grows meanwhile is cut,
		// and the worker's parse says so
		_, err = q.Witness.Put(ctx, jetstream.ObjectMeta{Name: name}, io.LimitReader(f, size))
		f.Close()
		if err != nil {
			forget(ctx, q, uploaded)
			return s, fmt.Errorf("job %s: upload %s: %w", req.ID, *w.path, err)
		}
		uploaded = append(uploaded, name)
		*w.path = witnessRef + name
	}
	data, err := json.Marshal(req)
	if err != nil {
		forget(ctx, q, uploaded)
		return s, err
	}
	msg := nats.NewMsg(jobSubject(priority))
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, msgID)
	ack, err := q.Conn.JS.PublishMsg(ctx, msg)
	if errors.Is(err, nats.ErrMaxPayload) || err == nil && ack.Duplicate {
		// certainly not queued by this call: no job will read or remove
		// these objects. (Another error may hide a message the server
		// took, whose witness must stay.)
		forget(ctx, q, uploaded)
	}
	if errors.Is(err, nats.ErrMaxPayload) {
		s.Err = fmt.Errorf("line %d: job %s: %d bytes, more than the server takes in a message (%d): put large inputs in a wtns file", line, req.ID, len(data), q.Conn.NC.MaxPayload())
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("job %s: publish: %w", req.ID, err)
	}
	s.Queued, s.Duplicate = !ack.Duplicate, ack.Duplicate
	if s.Queued {
		q.Conn.NC.Publish(wakeSubject, nil) // best effort: workers also poll
	}
	return s, nil
}

// forget removes witness objects uploaded for a job that was not queued
// (best effort: bounded by ctx).
func forget(ctx context.Context, q *Queue, objects []string) {
	for _, o := range objects {
		q.Witness.Delete(ctx, o)
	}
}

// openRegular opens a file to upload (what it is, for errors: "witness"),
// refusing anything but a regular file: /dev/zero would be uploaded for
// ever, and a FIFO nobody writes to would hang the submit or push (the open
// itself does not block, being O_NONBLOCK). It returns the file's size.
func openRegular(path, what string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s %s: not a regular file (%s): only a file's contents are uploaded", what, path, st.Mode().Type())
	}
	return f, st.Size(), nil
}

// storedProofValid checks job id's stored outputs against circuit's key in
// the store, and their public inputs against st's witness file. An error
// wrapping errRejected or errTooLarge is the outputs' fault; any other, the
// store's.
func storedProofValid(ctx context.Context, q *Queue, keys *storeKeys, id, circuit string, st statement) error {
	data, err := getOutputs(ctx, q, id)
	if err != nil {
		return err
	}
	var o Outputs
	if err := json.Unmarshal(data, &o); err != nil {
		return fmt.Errorf("%w: outputs: %v", errRejected, err)
	}
	v, got, err := keys.check(ctx, circuit, id, o.Files)
	if err != nil {
		return err
	}
	if _, err := st.bind(ctx, v, got.inputs, localInputs); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// not this job's proof, or its witness unreadable (which the
		// upload then reports): either way, not done
		return fmt.Errorf("%w: %v", errRejected, err)
	}
	return nil
}
