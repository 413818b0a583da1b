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
	"strconv"
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
		} else if err := l.Request.CheckPartitions(MaxPartitions); l.Request.IsPartitioned() && err != nil {
			// as prove refuses it
			s.Err = fmt.Errorf("line %d: job %s: %w", l.Number, l.Request.ID, err)
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
			if s.Err == nil && req.IsPartitioned() {
				s, err = submitRequest(ctx, q, keys, shapes, req, l.Number, o.Priority)
			} else if s.Err == nil {
				s, err = submitOne(ctx, q, keys, shapes, req, l.Number, o.Priority)
			}
			if err != nil {
				return refused, q.Explain(err) // "store disk full" when serve says so
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

// partitionsRefused is a worker's answer to a request of partitions that
// came as one job message (published by another tool): submit queues one
// message per partition, each a job any worker may take (requests.go).
func partitionsRefused(req stream.Request) error {
	return fmt.Errorf("job %s: a request of partitions (%d) in one job message: zkpipe submit queues one message per partition; submit the request with it",
		req.ID, len(req.Partitions))
}

// submitOne queues one valid request. Its error is the queue's; the job's
// own problems are in Submitted.Err.
func submitOne(ctx context.Context, q *Queue, keys *storeKeys, shapes map[string]witnessShape, req stream.Request, line int, priority string) (Submitted, error) {
	s := Submitted{ID: req.ID, Line: line}
	// A witness file is checked against its circuit before anything else:
	// only a file that is one of its witnesses (header and exact size) is
	// uploaded, not any file the job line names.
	ws, jobErr, err := shapeFor(ctx, keys, shapes, req, line)
	if jobErr != nil || err != nil {
		s.Err = jobErr
		return s, err
	}
	msgID := req.ID
	// Done already? A KV-like check on the proof store, beyond the server's
	// duplicate window; done only if the stored proof passes its circuit's
	// key and, for a witness or wtns job, is of this witness's public
	// inputs, since anyone with access to the queue can put outputs there.
	var info *jetstream.ObjectInfo
	err = retryQuick(ctx, func(ctx context.Context) (err error) {
		info, err = q.Proofs.GetInfo(ctx, outputsObject(req.ID))
		return err
	})
	if err == nil {
		err := retry(ctx, failoverWait, func(ctx context.Context) error {
			return storedProofValid(ctx, q, keys, req.ID, req.Circuit, statementOf(req))
		})
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
		last, err := lastResult(ctx, q, req.ID)
		if err != nil {
			return s, err
		}
		if last != nil && last.res.Error != "" {
			msgID = fmt.Sprintf("%s@retry-%d", req.ID, last.seq)
		}
	}
	uploaded, jobErr, err := upload(ctx, q, ws, &req, line, req.ID)
	if jobErr != nil || err != nil {
		s.Err = jobErr
		return s, err
	}
	dup, jobErr, err := publishJob(ctx, q, req, msgID, priority, nil, uploaded, line)
	if jobErr != nil || err != nil {
		s.Err = jobErr
		return s, err
	}
	s.Queued, s.Duplicate = !dup, dup
	if s.Queued {
		q.Conn.NC.Publish(wakeSubject, nil) // best effort: workers also poll
	}
	return s, nil
}

// shapeFor is the witness shape of req's circuit (from shapes, or read
// from the store once), when one of req's witnesses (or its partitions')
// is a file; jobErr is the job's problem (its circuit not in the store),
// err the queue's.
func shapeFor(ctx context.Context, keys *storeKeys, shapes map[string]witnessShape, req stream.Request, line int) (ws witnessShape, jobErr, err error) {
	files := req.Witness != "" || req.Wtns != ""
	for _, p := range req.Partitions {
		files = files || p.Witness != "" || p.Wtns != ""
	}
	if !files {
		return ws, nil, nil
	}
	if ws, ok := shapes[req.Circuit]; ok {
		return ws, nil, nil
	}
	err = retry(ctx, failoverWait, func(ctx context.Context) (err error) { ws, err = keys.shape(ctx, req.Circuit); return err })
	switch {
	case errors.Is(err, ErrNoCircuit) || errors.Is(err, ErrCircuitIncomplete) || errors.Is(err, errRejected):
		return ws, fmt.Errorf("line %d: job %s: its witness cannot be checked against circuit %s: %w (push the circuit before its jobs)", line, req.ID, req.Circuit, err), nil
	case err != nil:
		return ws, nil, fmt.Errorf("job %s: circuit %s: %w", req.ID, req.Circuit, err)
	}
	shapes[req.Circuit] = ws
	return ws, nil, nil
}

// lastSeen is an id's last result line and its stream sequence.
type lastSeen struct {
	res stream.Result
	seq uint64
}

// lastResult is id's last result line, nil when it has none.
func lastResult(ctx context.Context, q *Queue, id string) (*lastSeen, error) {
	var last *jetstream.RawStreamMsg
	err := retryQuick(ctx, func(ctx context.Context) (err error) {
		last, err = q.Results.GetLastMsgForSubject(ctx, resultSubject(id))
		return err
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	var prev stream.Result
	if json.Unmarshal(last.Data, &prev) != nil {
		return &lastSeen{res: stream.Result{Error: "unreadable"}, seq: last.Sequence}, nil
	}
	return &lastSeen{res: prev, seq: last.Sequence}, nil
}

// upload checks req's witness file (gnark or wtns) against ws and puts it
// in the witness store under a name of its own (owner: the job's id),
// pointing req at it. jobErr is the file's problem, err the queue's; either
// way nothing uploaded is left behind.
func upload(ctx context.Context, q *Queue, ws witnessShape, req *stream.Request, line int, owner string) (uploaded []string, jobErr, err error) {
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
			forget(ctx, q, uploaded)
			return nil, fmt.Errorf("line %d: job %s: %w", line, owner, err), nil
		}
		// A name of its own per upload (the id, then a nonce the id
		// cannot contain): a second submit of a queued id must not
		// overwrite the witness the queued job will read.
		name := req.ID + "@" + rand.Text() + w.ext
		// no more than fstat said: a file that grows meanwhile is cut,
		// and the worker's parse says so; read and sent a chunk at a time
		err = retry(ctx, failoverWait, func(ctx context.Context) error {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			_, err := q.Witness.Put(ctx, jetstream.ObjectMeta{Name: name}, io.LimitReader(f, size))
			return err
		})
		f.Close()
		if err != nil {
			forget(ctx, q, uploaded)
			return nil, nil, fmt.Errorf("job %s: upload %s: %w", owner, *w.path, err)
		}
		uploaded = append(uploaded, name)
		*w.path = witnessRef + name
	}
	return uploaded, nil, nil
}

// publishJob queues req (a job, or a partition with its headers) at
// priority under msgID, tried again while JetStream does not answer;
// dup: the server had it already (uploaded, its witness objects, are then
// removed again). jobErr: the message is too large for the server.
func publishJob(ctx context.Context, q *Queue, req stream.Request, msgID, priority string, headers nats.Header, uploaded []string, line int) (dup bool, jobErr, err error) {
	data, err := json.Marshal(req)
	if err != nil {
		forget(ctx, q, uploaded)
		return false, nil, err
	}
	msg := nats.NewMsg(jobSubject(priority))
	msg.Data = data
	for k, v := range headers {
		msg.Header[k] = v
	}
	msg.Header.Set(jetstream.MsgIDHeader, msgID)
	var ack *jetstream.PubAck
	err = retryQuick(ctx, func(ctx context.Context) (err error) { ack, err = q.Conn.JS.PublishMsg(ctx, msg); return err })
	if errors.Is(err, nats.ErrMaxPayload) || err == nil && ack.Duplicate {
		// certainly not queued by this call: no job will read or remove
		// these objects. (Another error may hide a message the server
		// took, whose witness must stay.)
		forget(ctx, q, uploaded)
	}
	if errors.Is(err, nats.ErrMaxPayload) {
		return false, fmt.Errorf("line %d: job %s: %d bytes, more than the server takes in a message (%d): put large inputs in a wtns file", line, req.ID, len(data), q.Conn.NC.MaxPayload()), nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("job %s: publish: %w", req.ID, err)
	}
	return ack.Duplicate, nil, nil
}

// submitRequest queues a valid request of partitions: one job message a
// partition (requests.go), each with its witness uploaded. Done: its last
// result line proved every partition, and each partition's stored proof
// passes its circuit's key and is of its witness's public inputs.
func submitRequest(ctx context.Context, q *Queue, keys *storeKeys, shapes map[string]witnessShape, req stream.Request, line int, priority string) (Submitted, error) {
	s := Submitted{ID: req.ID, Line: line}
	ws, jobErr, err := shapeFor(ctx, keys, shapes, req, line)
	if jobErr != nil || err != nil {
		s.Err = jobErr
		return s, err
	}
	// Its submission's tag, as a job's message id: the first, "" (a second
	// submit within the duplicate window is dropped); after a failed
	// answer, that answer's; after a proved one whose proofs fail their
	// check, that too.
	tag := ""
	last, err := lastResult(ctx, q, req.ID)
	if err != nil {
		return s, err
	}
	if last != nil {
		tag = fmt.Sprintf("retry-%d", last.seq)
		if last.res.Error == "" && len(last.res.Partitions) == len(req.Partitions) {
			tag = fmt.Sprintf("unverified-%d", last.seq)
			done := true
			for i := range req.Partitions {
				part := req.Partition(i)
				err := retry(ctx, failoverWait, func(ctx context.Context) error {
					return storedProofValid(ctx, q, keys, part.ID, req.Circuit, statementOf(part))
				})
				if errors.Is(err, errRejected) || errors.Is(err, errTooLarge) || errors.Is(err, jetstream.ErrObjectNotFound) {
					done = false
					break
				}
				if err != nil {
					return s, fmt.Errorf("job %s: %w", part.ID, err)
				}
			}
			if done {
				s.Done = true
				return s, nil
			}
		}
	}
	queued := 0
	for i := range req.Partitions {
		part := req.Partition(i)
		uploaded, jobErr, err := upload(ctx, q, ws, &part, line, req.ID)
		if jobErr != nil || err != nil {
			// partitions queued before stay queued: submitting the request
			// again queues the rest (the same tag: those are duplicates)
			s.Err = jobErr
			if queued > 0 && jobErr != nil {
				s.Err = fmt.Errorf("%w; partitions 0 to %d were queued: fix it and submit the request again", jobErr, i-1)
			}
			return s, err
		}
		msgID := part.ID
		if tag != "" {
			msgID += "@" + tag
		}
		h := nats.Header{}
		h.Set(hdrRequest, req.ID)
		h.Set(hdrPartition, strconv.Itoa(i))
		h.Set(hdrPartitions, strconv.Itoa(len(req.Partitions)))
		if tag != "" {
			h.Set(hdrTag, tag)
		}
		dup, jobErr, err := publishJob(ctx, q, part, msgID, priority, h, uploaded, line)
		if jobErr != nil || err != nil {
			s.Err = jobErr
			return s, err
		}
		if !dup {
			queued++
		}
	}
	s.Queued, s.Duplicate = queued > 0, queued == 0
	if s.Queued {
		q.Conn.NC.Publish(wakeSubject, nil)
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
