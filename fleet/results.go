package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/stream"
)

// ResultsOptions configure Collect.
type ResultsOptions struct {
	Out    string // directory for ID.proof, ID.public (and ID.proof.json, ID.calldata)
	Follow bool   // wait for more results; otherwise stop once caught up
	// Verifier is the key every proof is checked against (LocalVerifier);
	// nil: each circuit's key in the circuit store.
	Verifier *Verifier
	// Statements are the jobs file given to zkpipe submit (ReadStatements):
	// a proof of one of its jobs must also have the public inputs of the
	// job's submitted witness. nil: proofs are checked against the key only.
	Statements *Statements
	// Duplicate, when set, hears of each line Collect drops because a line
	// of its id was taken before in this call (a job or request answered
	// twice, as a redelivery after a server's death may make it): first
	// is the line taken (as published), again the one dropped. SameStatement
	// tells whether they claim the same public inputs.
	Duplicate func(first, again stream.Result)
}

// SameStatement tells whether two result lines of one id claim the same
// statement: both failed, or both proved with the same public inputs (a
// request: each partition's).
func SameStatement(a, b stream.Result) bool {
	if (a.Error == "") != (b.Error == "") {
		return false
	}
	if a.Error != "" {
		return true
	}
	if !slices.Equal(a.PublicInputs, b.PublicInputs) || len(a.Partitions) != len(b.Partitions) {
		return false
	}
	for i := range a.Partitions {
		if !slices.Equal(a.Partitions[i].PublicInputs, b.Partitions[i].PublicInputs) || (a.Partitions[i].Error == "") != (b.Partitions[i].Error == "") {
			return false
		}
	}
	return true
}

// Collect reads the result lines in the order they were published, checks
// each proven job's stored proof against its verifying key (o.Verifier, or
// the circuit store's), writes its files into o.Out (atomically, the proof
// last) and calls emit with the line, its Proof and Public rewritten to
// those files: the same files and lines as zkpipe prove, and VerifiedWith
// naming the key. A job whose outputs cannot be read or whose proof fails
// the check is emitted as failed, naming it and why, and nothing of it is
// written; the lines after it go on. With o.Statements, a proof of one of
// its jobs whose public inputs are not those submitted is failed too, and
// each such job's line says whether its statement was bound. Each id is
// emitted once per call, unless an error is followed by a proof (a job
// submitted again).
func Collect(ctx context.Context, q *Queue, o ResultsOptions, emit func(stream.Result) error) error {
	// The lock zkpipe prove holds on its --out: two writers of one
	// directory could leave a job's proof from one and its public file
	// from the other.
	out, err := engine.OpenOutDir(o.Out)
	if err != nil {
		return fmt.Errorf("fleet.ResultsOptions.Out: %w", err)
	}
	defer out.Close()
	if !o.Follow {
		var info *jetstream.StreamInfo
		if err := retryQuick(ctx, func(ctx context.Context) (err error) { info, err = q.Results.Info(ctx); return err }); err != nil {
			return err
		}
		if info.State.Msgs == 0 {
			return nil
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	it := &lines{q: q, ctx: ctx}
	if err := it.open(); err != nil {
		return err
	}
	defer it.stop()

	// The reader takes lines in order and starts fetching each one's
	// outputs, up to fetchAhead at once (each is a round trip or more to
	// the store); the loop below emits them in the same order.
	order := make(chan *collected, fetchAhead)
	slots := make(chan struct{}, fetchAhead)
	var fetches sync.WaitGroup
	readErr := make(chan error, 1)
	readerDone := make(chan struct{})
	// On the way out: stop the reader, then wait for its fetches, so that no
	// file is written once Collect returns.
	defer func() {
		cancel()
		<-readerDone
		fetches.Wait()
	}()
	keys := newStoreKeys(q)
	var provenMu sync.Mutex
	proven := map[string]bool{}          // id → taken with a proof (false: with an error)
	firsts := map[string]stream.Result{} // id → the line taken, as published (with o.Duplicate)
	go func() {
		defer close(readerDone)
		defer close(order)
		readErr <- func() error {
			for {
				m, err := it.next()
				if err != nil {
					return err
				}
				var res stream.Result
				if err := json.Unmarshal(m.Data(), &res); err != nil {
					return fmt.Errorf("result %s: %w", m.Subject(), err)
				}
				// only this process binds a statement; a line's own claim
				// is the worker's, whoever that was
				res.Statement = ""
				provenMu.Lock()
				ok, seen := proven[res.ID]
				take := !seen || (!ok && res.Error == "")
				if take {
					proven[res.ID] = res.Error == ""
					if o.Duplicate != nil {
						firsts[res.ID] = res
					}
				}
				first := firsts[res.ID]
				provenMu.Unlock()
				if !take && o.Duplicate != nil {
					o.Duplicate(first, res)
				}
				if take {
					c := &collected{res: res, done: make(chan struct{})}
					if res.Error == "" {
						select {
						case slots <- struct{}{}:
						case <-ctx.Done():
							return ctx.Err()
						}
						fetches.Go(func() {
							defer func() { <-slots }()
							err := fetchOutputs(ctx, q, keys, o, &c.res)
							var bad badOutputs
							if errors.As(err, &bad) {
								// a failed line, and a later proof of
								// this id (proven again) is taken
								c.res = stream.Result{ID: c.res.ID, Circuit: c.res.Circuit, Error: bad.Error(), FailedStage: "results", Stages: []stream.StageTime{}}
								provenMu.Lock()
								proven[c.res.ID] = false
								provenMu.Unlock()
								err = nil
							}
							c.err = err
							close(c.done)
						})
					} else {
						close(c.done)
					}
					select {
					case order <- c:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				if !o.Follow {
					meta, err := m.Metadata()
					if err != nil {
						return err
					}
					if meta.NumPending == 0 {
						return nil
					}
				}
			}
		}()
	}()
	for c := range order {
		<-c.done
		if c.err != nil {
			return c.err
		}
		if err := emit(c.res); err != nil {
			return err
		}
	}
	if err := <-readErr; err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// lines reads the results stream in order from its first line, across a
// cluster's failovers: an ordered consumer whose server dies (or whose
// stream's leader moves) stops with an error; it is made again from the
// line after the last one read, for up to failoverWait.
type lines struct {
	q    *Queue
	ctx  context.Context
	it   jetstream.MessagesContext
	halt func() bool // stops the AfterFunc that stops it
	last uint64      // the stream sequence of the last line read
}

func (l *lines) open() error {
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if l.last > 0 {
		cfg = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: l.last + 1}
	}
	return retry(l.ctx, failoverWait, func(context.Context) error {
		cons, err := l.q.Results.OrderedConsumer(l.ctx, cfg)
		if err != nil {
			return err
		}
		it, err := cons.Messages()
		if err != nil {
			return err
		}
		l.it, l.halt = it, context.AfterFunc(l.ctx, it.Stop)
		return nil
	})
}

func (l *lines) stop() {
	if l.it != nil {
		l.halt()
		l.it.Stop()
	}
}

// next is the next line; an error is ctx's, or the stream's for longer
// than failoverWait.
func (l *lines) next() (jetstream.Msg, error) {
	var end time.Time
	for {
		m, err := l.it.Next()
		if err == nil {
			if meta, merr := m.Metadata(); merr == nil {
				l.last = meta.Sequence.Stream
			}
			return m, nil
		}
		if l.ctx.Err() != nil {
			return nil, l.ctx.Err()
		}
		if end.IsZero() {
			end = time.Now().Add(failoverWait)
		} else if time.Now().After(end) {
			return nil, err
		}
		l.stop()
		if oerr := l.open(); oerr != nil {
			return nil, fmt.Errorf("%w; reading the results again: %v", err, oerr)
		}
	}
}

// fetchAhead is how many results' outputs Collect fetches at once.
const fetchAhead = 16

// collected is one result line on its way out of Collect.
type collected struct {
	res  stream.Result
	err  error
	done chan struct{} // closed when res's files are written (or err set)
}

// maxOutputsBytes bounds the outputs object of one job that Collect reads
// into memory: a proof is a few hundred bytes, and its public inputs 32
// bytes each in ID.public and some 80 in the result line, so 64 MiB is over
// half a million public inputs.
const maxOutputsBytes = 64 << 20

var errTooLarge = errors.New("more than a proof's outputs can be")

// getOutputs reads the outputs object of job id, refusing one over
// maxOutputsBytes by its size in the store, or by what it gives.
func getOutputs(ctx context.Context, q *Queue, id string) ([]byte, error) {
	return q.readObject(ctx, ProofBucket, outputsObject(id), maxOutputsBytes)
}

// badOutputs is why a job's stored outputs cannot be reported proved (not
// there, unreadable, too large, or a proof its key rejects): that job's
// failure, not Collect's.
type badOutputs struct{ err error }

func (b badOutputs) Error() string { return b.err.Error() }
func (b badOutputs) Unwrap() error { return b.err }

// fetchOutputs checks res's stored proof, writes its files into o.Out and
// points res at them. A problem with the outputs themselves is a
// badOutputs; any other error (the output directory, ctx) stops Collect.
func fetchOutputs(ctx context.Context, q *Queue, keys *storeKeys, o ResultsOptions, res *stream.Result) error {
	if !validName(res.ID) {
		// it names the files written: ../x would write outside o.Out
		return badOutputs{fmt.Errorf("job %q: a result line with an invalid id", res.ID)}
	}
	if res.Partitions != nil {
		return fetchRequest(ctx, q, keys, o, res)
	}
	return fetchJob(ctx, q, keys, o, res)
}

// fetchRequest is fetchOutputs for a request of partitions' line: each
// partition that proved is checked and written as a job's outputs are
// (OUT/ID/INDEX.proof, …, as prove writes them); one whose stored proof
// is missing or fails fails in the line, whose error then names it.
func fetchRequest(ctx context.Context, q *Queue, keys *storeKeys, o ResultsOptions, res *stream.Result) error {
	if len(res.Partitions) > MaxPartitions {
		return badOutputs{fmt.Errorf("job %s: a result line of %d partitions, more than a request may have (%d)", res.ID, len(res.Partitions), MaxPartitions)}
	}
	parts := make([]stream.Result, len(res.Partitions))
	verified, bound := "", true
	for i, p := range res.Partitions {
		if p.Index != i || p.ID != stream.PartitionID(res.ID, i) {
			return badOutputs{fmt.Errorf("job %s: partition %d of its result line is %q (index %d): not this request's", res.ID, i, p.ID, p.Index)}
		}
		parts[i] = stream.Result{ID: p.ID, Circuit: res.Circuit, Device: p.Device, Error: p.Error, FailedStage: p.FailedStage,
			Stages: p.Stages, TotalMS: p.TotalMS, ReservedBytes: p.ReservedBytes, MinorFaults: p.MinorFaults, DeviceReservedBytes: p.DeviceReservedBytes}
		if p.Error != "" {
			continue
		}
		pr := parts[i]
		err := fetchJob(ctx, q, keys, o, &pr)
		var bad badOutputs
		switch {
		case errors.As(err, &bad):
			pr = stream.Result{ID: p.ID, Circuit: res.Circuit, Error: bad.Error(), FailedStage: "results", Stages: []stream.StageTime{},
				ReservedBytes: p.ReservedBytes, MinorFaults: p.MinorFaults, DeviceReservedBytes: p.DeviceReservedBytes}
		case err != nil:
			return err
		default:
			verified = pr.VerifiedWith
			bound = bound && pr.Statement == Bound
		}
		parts[i] = pr
	}
	line := stream.RequestLine(res.ID, res.Circuit, parts)
	line.Stages, line.TotalMS, line.Device, line.RSSPeakBytes = res.Stages, res.TotalMS, res.Device, res.RSSPeakBytes
	if line.Error == "" {
		line.VerifiedWith = verified
		if bound && o.Statements != nil {
			line.Statement = Bound
		} else if o.Statements != nil && len(parts) > 0 {
			line.Statement = parts[0].Statement
		}
	}
	*res = line
	return nil
}

// fetchJob checks one job's stored outputs (or a partition's) and writes
// its files.
func fetchJob(ctx context.Context, q *Queue, keys *storeKeys, o ResultsOptions, res *stream.Result) error {
	var data []byte
	var err error
	for try := 0; try < 5; try++ {
		// through a cluster's leader election too
		err = retry(ctx, failoverWait, func(ctx context.Context) (err error) { data, err = getOutputs(ctx, q, res.ID); return err })
		if err == nil || errors.Is(err, errTooLarge) || ctx.Err() != nil || unavailable(err) {
			break
		}
		// A worker may be storing it again (a redelivered job).
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return badOutputs{fmt.Errorf("job %s: outputs: %w", res.ID, err)}
	}
	var out Outputs
	if err := json.Unmarshal(data, &out); err != nil {
		return badOutputs{fmt.Errorf("job %s: outputs: %w", res.ID, err)}
	}
	v := o.Verifier
	var got checked
	if v != nil {
		got, err = v.check(ctx, res.ID, out.Files)
	} else {
		err = retry(ctx, failoverWait, func(ctx context.Context) (err error) {
			v, got, err = keys.check(ctx, res.Circuit, res.ID, out.Files)
			return err
		})
		if v == nil && err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return badOutputs{fmt.Errorf("job %s: not reported proved: no key to check its proof against: %w", res.ID, err)}
		}
	}
	if err != nil {
		return badOutputs{fmt.Errorf("job %s: stored proof rejected by %s: %w", res.ID, v.Against, err)}
	}
	if st, ok := o.Statements.of(res.ID); ok {
		bound, err := st.bind(ctx, v, got.inputs, localInputs)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return badOutputs{fmt.Errorf("job %s: %w", res.ID, err)}
		}
		res.Statement = bound
	}
	dir := blob.Dir(o.Out)
	res.Calldata = "" // unless the job stored one: the line's own name is not trusted
	for i, name := range got.names {
		p, err := dir.Write(name, got.data[i])
		if err != nil {
			return err
		}
		switch name {
		case got.public:
			res.Public = p
		case got.proof:
			res.Proof = p
		case got.calldata:
			res.Calldata = p
		}
	}
	res.PublicInputs, res.VerifiedWith = got.inputs, v.Against
	return nil
}
