package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// ResultsOptions configure Collect.
type ResultsOptions struct {
	Out    string // directory for ID.proof, ID.public (and ID.proof.json)
	Follow bool   // wait for more results; otherwise stop once caught up
}

// Collect reads the result lines in the order they were published, writes
// each proven job's files into o.Out (atomically, the proof last) and calls
// emit with the line, its Proof and Public rewritten to those files: the
// same files and lines as zkpipe prove. Each id is emitted once per call,
// unless an error is followed by a proof (a job submitted again).
func Collect(ctx context.Context, q *Queue, o ResultsOptions, emit func(stream.Result) error) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if !o.Follow {
		info, err := q.Results.Info(ctx)
		if err != nil {
			return err
		}
		if info.State.Msgs == 0 {
			return nil
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cons, err := q.Results.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()

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
	go func() {
		defer close(readerDone)
		defer close(order)
		readErr <- func() error {
			proven := map[string]bool{} // id → taken with a proof (false: with an error)
			for {
				m, err := it.Next()
				if err != nil {
					return err
				}
				var res stream.Result
				if err := json.Unmarshal(m.Data(), &res); err != nil {
					return fmt.Errorf("result %s: %w", m.Subject(), err)
				}
				if ok, seen := proven[res.ID]; !seen || (!ok && res.Error == "") {
					proven[res.ID] = res.Error == ""
					c := &collected{res: res, done: make(chan struct{})}
					if res.Error == "" {
						select {
						case slots <- struct{}{}:
						case <-ctx.Done():
							return ctx.Err()
						}
						fetches.Go(func() {
							defer func() { <-slots }()
							c.err = fetchOutputs(ctx, q, o.Out, &c.res)
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
	r, err := q.Proofs.Get(ctx, outputsObject(id))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	info, err := r.Info()
	if err != nil {
		return nil, err
	}
	if info.Size > maxOutputsBytes {
		return nil, fmt.Errorf("%d bytes in the store, %w (%d)", info.Size, errTooLarge, maxOutputsBytes)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxOutputsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxOutputsBytes {
		return nil, fmt.Errorf("%w (%d)", errTooLarge, maxOutputsBytes)
	}
	return data, nil
}

// fetchOutputs writes res's files into out and points res at them.
func fetchOutputs(ctx context.Context, q *Queue, out string, res *stream.Result) error {
	var data []byte
	var err error
	for try := 0; try < 5; try++ {
		if data, err = getOutputs(ctx, q, res.ID); err == nil || errors.Is(err, errTooLarge) {
			break
		}
		// A worker may be storing it again (a redelivered job).
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("job %s: outputs: %w", res.ID, err)
	}
	var o Outputs
	if err := json.Unmarshal(data, &o); err != nil {
		return fmt.Errorf("job %s: outputs: %w", res.ID, err)
	}
	proof, public := path.Base(res.Proof), path.Base(res.Public)
	if o.Files[proof] == nil || o.Files[public] == nil {
		return fmt.Errorf("job %s: outputs lack %s or %s", res.ID, proof, public)
	}
	dir := stages.Dir(out)
	for name, b := range o.Files {
		if name == proof {
			continue
		}
		if path.Base(name) != name || !strings.HasPrefix(name, res.ID+".") {
			return fmt.Errorf("job %s: outputs hold a file named %q", res.ID, name)
		}
		p, err := dir.Write(name, b)
		if err != nil {
			return err
		}
		if name == public {
			res.Public = p
		}
	}
	// The proof last, as prove writes it: its presence means the rest is there.
	res.Proof, err = dir.Write(proof, o.Files[proof])
	return err
}
