package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/stream"
)

// A request of partitions (stream.Request.Partitions: k proofs of one
// circuit, answered by one result line) goes through the fleet as k job
// messages, one per partition, that any worker may take: a request of ten
// partitions spreads over the GPUs of every host. Each partition is a job
// like any other (its witness in the store, its own deliveries, suspects
// and hand-backs) whose id is "REQUEST/INDEX", and whose outputs are
// stored under that id. What a single job publishes as its result line, a
// partition records instead in RequestBucket, under its request's key:
//
//	key    REQUEST=TAG   (TAG: the submission's, requestTag)
//	value  requestRecord: k, the circuit, and the answer of each partition
//	       answered so far (its result line, proved or failed for good)
//
// Each record is written by compare-and-swap on the key's revision, so
// the worker whose write completes the record sees it complete; it then
// publishes the request's one result line (stream.RequestLine, as prove
// writes it) under a message id of the request's submission, deletes the
// record, and only then acks or terminates its partition. A worker that
// dies before the line is out leaves its partition unanswered: whoever
// takes it next records it again (answered from its stored outputs), finds
// the record complete and publishes the line; two that publish it both
// are one line (the message id), and zkpipe results takes one line per id.

// maxRequestRecord bounds a request's record: a partition's answer is a
// result line, some 2 KB with its stage timings, each error cut to
// maxRecordedError; 64 partitions (stream.DefaultMaxPartitions) fit.
const maxRequestRecord = 1 << 20

// maxRecordedError is the most of a partition's error a record keeps.
const maxRecordedError = 2048

// MaxPartitions is the most partitions a request through the fleet may
// have: stream.DefaultMaxPartitions, what prove takes unless told
// otherwise.
const MaxPartitions = stream.DefaultMaxPartitions

// partRef is what a partition's job message says of its request.
type partRef struct {
	request string // the request's id
	index   int
	k       int    // the request's partitions
	tag     string // the submission's (requestTag)
}

// partOf reads a job message's partition headers; nil, nil for a single
// job. An error names what is wrong: the message is answered as bad.
func partOf(h nats.Header, id string) (*partRef, error) {
	req := h.Get(hdrRequest)
	if req == "" {
		return nil, nil
	}
	p := &partRef{request: req, tag: h.Get(hdrTag)}
	var err1, err2 error
	p.index, err1 = strconv.Atoi(h.Get(hdrPartition))
	p.k, err2 = strconv.Atoi(h.Get(hdrPartitions))
	switch {
	case !validName(req):
		return nil, fmt.Errorf("a partition of a request with an invalid id %q", req)
	case err1 != nil || err2 != nil || p.k < 1 || p.k > MaxPartitions || p.index < 0 || p.index >= p.k:
		return nil, fmt.Errorf("partition %q of %q of request %s: want an index below a count of 1 to %d", h.Get(hdrPartition), h.Get(hdrPartitions), req, MaxPartitions)
	case id != stream.PartitionID(req, p.index):
		return nil, fmt.Errorf("partition %d of request %s with the id %q: want %s", p.index, req, id, stream.PartitionID(req, p.index))
	case p.tag != "" && !validTag(p.tag):
		return nil, fmt.Errorf("request %s: a submission tag %q", req, p.tag)
	}
	return p, nil
}

// validTag: a submission tag as requestTag makes them, fit for a key.
func validTag(t string) bool {
	if len(t) > 64 {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// key is the request's key in RequestBucket.
func (p *partRef) key() string {
	t := p.tag
	if t == "" {
		t = "0"
	}
	return p.request + "=" + t
}

// answerID is the message id of the request's result line: one per
// submission, whoever publishes it.
func (p *partRef) answerID() string { return p.request + "@answer-" + p.tag }

// requestRecord is a request's record in RequestBucket.
type requestRecord struct {
	K       int                   `json:"k"`
	Circuit string                `json:"circuit,omitempty"`
	Parts   map[int]stream.Result `json:"parts"`
}

// recordPart records res as partition p's answer and returns the record
// as it now stands (compare-and-swap, tried again on a conflict or while
// JetStream does not answer).
func (q *Queue) recordPart(ctx context.Context, p *partRef, circuit string, res stream.Result) (requestRecord, error) {
	res.Shape, res.ShapeChanges = "", nil
	if len(res.Error) > maxRecordedError {
		res.Error = res.Error[:maxRecordedError] + "…"
	}
	var rec requestRecord
	err := retry(ctx, failoverWait, func(ctx context.Context) error {
		// a conflict: another partition recorded meanwhile, or this
		// server's copy of the record was behind; read it again
		var err error
		for try := 0; try < 50; try++ {
			if try > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(try) * 10 * time.Millisecond):
				}
			}
			rec = requestRecord{K: p.k, Circuit: circuit, Parts: map[int]stream.Result{}}
			var rev uint64
			e, gerr := q.Requests.Get(ctx, p.key())
			switch {
			case errors.Is(gerr, jetstream.ErrKeyNotFound):
				// none: the request's first answer, or one after the
				// request's line is out and its record gone (a partition
				// answered again), which must not start a record anew
				if answered, err := q.answered(ctx, p); err != nil || answered {
					if answered {
						rec.K = -1
					}
					return err
				}
			case gerr != nil:
				return gerr
			default:
				rev = e.Revision()
				if jerr := json.Unmarshal(e.Value(), &rec); jerr != nil || rec.K != p.k {
					// not a record of this request's shape: replaced
					rec = requestRecord{K: p.k, Circuit: circuit, Parts: map[int]stream.Result{}}
				}
				if rec.Parts == nil {
					rec.Parts = map[int]stream.Result{}
				}
			}
			rec.Parts[p.index] = res
			data, merr := json.Marshal(rec)
			if merr != nil {
				return merr
			}
			if rev == 0 {
				_, err = q.Requests.Create(ctx, p.key(), data)
			} else {
				_, err = q.Requests.Update(ctx, p.key(), data, rev)
			}
			if err == nil || !conflict(err) {
				return err
			}
		}
		return err
	})
	if err != nil {
		return rec, fmt.Errorf("record partition %d of request %s: %w", p.index, p.request, err)
	}
	return rec, nil
}

// answered tells whether p's request has its line of p's submission.
func (q *Queue) answered(ctx context.Context, p *partRef) (bool, error) {
	m, err := q.Results.GetLastMsgForSubject(ctx, resultSubject(p.request))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.Header.Get(jetstream.MsgIDHeader) == p.answerID(), nil
}

// conflict tells a compare-and-swap that lost (the key changed since it
// was read, or was created meanwhile).
func conflict(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) ||
		errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// complete is the request's line when every partition has its answer
// (and the line is not out already: K −1).
func (r requestRecord) complete(id string) (stream.Result, bool) {
	if r.K < 0 || len(r.Parts) < r.K {
		return stream.Result{}, false
	}
	parts := make([]stream.Result, r.K)
	for i := range r.K {
		res, ok := r.Parts[i]
		if !ok {
			return stream.Result{}, false
		}
		parts[i] = res
	}
	return stream.RequestLine(id, r.Circuit, parts), true
}

// partAnswered records partition h's answer res (proved or failed for
// good) and, when that completes its request, publishes the request's
// result line and deletes the record. An error is the store's: the
// partition goes back to the queue.
func (w *Worker) partAnswered(ctx context.Context, h *held, res stream.Result) error {
	p := h.part
	rec, err := w.q.recordPart(ctx, p, h.circuit, res)
	if err != nil {
		return err
	}
	line, done := rec.complete(p.request)
	if rec.K < 0 {
		w.logf("job %s: answered again, after its request's line: nothing more to do", h.id)
		w.observe("duplicate")
		return nil
	}
	if !done {
		return nil
	}
	if err := w.publishAs(ctx, line, p.answerID()); err != nil {
		return err
	}
	if line.Error != "" {
		w.logf("request %s answered: %s", p.request, line.Error)
	} else {
		w.logf("request %s answered: its %d partitions proved", p.request, p.k)
	}
	if err := retryQuick(ctx, func(ctx context.Context) error { return w.q.Requests.Delete(ctx, p.key()) }); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		w.logf("request %s: delete its record: %v", p.request, err)
	}
	return nil
}
