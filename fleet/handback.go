package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStream counts every delivery of a message, whether the last one ended
// with the worker dying (the ack wait ran out) or with the worker handing
// the job back (Nak) because of a fault of its own: a lost GPU, a full
// disk, NATS unreachable, or its own shutdown. Only the first kind says
// anything about the job (it may kill its workers), so the workers keep
// their own count of the second kind, in HandBackBucket, and give each kind
// a budget of its own (WorkerOptions.MaxDeliveries, MaxHostFaults):
//
//	lost   = NumDelivered − 1 − Back   deliveries that ended with no answer
//	Faults ≤ Back                      hand-backs for a fault of a worker's
//	Solo   ≤ lost                      of those, the runs the job had alone
//
// A worker that dies takes every job it holds with it, the innocent with
// the one that killed it: so a lost delivery makes a job a suspect, which
// runs alone from then on (Worker.enter), and only Solo, the suspect's
// runs alone that ended with no answer, counts towards MaxDeliveries. A
// worker adds one to Solo before such a run, and takes it back in the
// hand-back count if the run ends in a hand-back (a host fault); a job
// handed back from the prover at shutdown or past --job-timeout is not
// counted as handed back: its delivery is lost.
//
// A count is written before the Nak it counts, so a worker that dies in
// between credits the job one hand-back too many, never one too few.
type handBacks struct {
	Back   int `json:"back"`
	Faults int `json:"faults"`
	Solo   int `json:"solo,omitempty"`
}

// handBackTimeout bounds the bookkeeping of one hand-back: a worker that
// cannot reach NATS still hands the job back (the Nak fails too, and the
// ack wait does the rest).
const handBackTimeout = 2 * time.Second

// readHandBacks reads the count of the job message seq; none is zero.
func (q *Queue) readHandBacks(ctx context.Context, seq uint64) (handBacks, uint64, error) {
	var hb handBacks
	e, err := q.HandBacks.Get(ctx, handBackKey(seq))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return hb, 0, nil
	}
	if err != nil {
		return hb, 0, err
	}
	if err := json.Unmarshal(e.Value(), &hb); err != nil {
		return hb, 0, fmt.Errorf("hand-back count of message %d: %w", seq, err)
	}
	return hb, e.Revision(), nil
}

// countHandBack adds one hand-back (and one fault, if fault) to the count
// of the job message seq; solo: the hand-back ends a run alone that
// markSolo counted, which is taken back.
func (q *Queue) countHandBack(ctx context.Context, seq uint64, fault, solo bool) error {
	err := q.updateHandBacks(ctx, seq, func(hb *handBacks) {
		hb.Back++
		if fault {
			hb.Faults++
		}
		if solo && hb.Solo > 0 {
			hb.Solo--
		}
	})
	if err != nil {
		return fmt.Errorf("count a hand-back of message %d: %w", seq, err)
	}
	return nil
}

// markSolo counts a run alone of the job message seq, before it starts.
func (q *Queue) markSolo(ctx context.Context, seq uint64) error {
	if err := q.updateHandBacks(ctx, seq, func(hb *handBacks) { hb.Solo++ }); err != nil {
		return fmt.Errorf("count a run alone of message %d: %w", seq, err)
	}
	return nil
}

// updateHandBacks applies change to the count of the job message seq. Two
// workers rarely hold one message at once (one whose ack wait ran out, and
// the next), so the update is a compare and swap on the key's revision,
// tried again on a conflict.
func (q *Queue) updateHandBacks(ctx context.Context, seq uint64, change func(*handBacks)) error {
	return retryQuick(ctx, func(ctx context.Context) error { return q.updateHandBacksOnce(ctx, seq, change) })
}

func (q *Queue) updateHandBacksOnce(ctx context.Context, seq uint64, change func(*handBacks)) error {
	var err error
	for range 3 {
		var hb handBacks
		var rev uint64
		if hb, rev, err = q.readHandBacks(ctx, seq); err != nil {
			return err
		}
		change(&hb)
		data, _ := json.Marshal(hb) // three ints: cannot fail
		if rev == 0 {
			_, err = q.HandBacks.Create(ctx, handBackKey(seq), data)
		} else {
			_, err = q.HandBacks.Update(ctx, handBackKey(seq), data, rev)
		}
		if err == nil {
			return nil
		}
	}
	return err
}
