package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
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

	proven := map[string]bool{} // id → emitted with a proof (false: with an error)
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		var res stream.Result
		if err := json.Unmarshal(m.Data(), &res); err != nil {
			return fmt.Errorf("result %s: %w", m.Subject(), err)
		}
		if ok, seen := proven[res.ID]; !seen || (!ok && res.Error == "") {
			if res.Error == "" {
				if err := fetchOutputs(ctx, q, o.Out, &res); err != nil {
					return err
				}
			}
			if err := emit(res); err != nil {
				return err
			}
			proven[res.ID] = res.Error == ""
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
}

// fetchOutputs writes res's files into out and points res at them.
func fetchOutputs(ctx context.Context, q *Queue, out string, res *stream.Result) error {
	dir := stages.Dir(out)
	get := func(obj string, optional bool) ([]byte, error) {
		var err error
		for try := 0; try < 5; try++ {
			var data []byte
			if data, err = q.Proofs.GetBytes(ctx, obj); err == nil {
				return data, nil
			}
			if errors.Is(err, jetstream.ErrObjectNotFound) && optional {
				return nil, nil
			}
			// A worker may be storing it again (a redelivered job).
			time.Sleep(200 * time.Millisecond)
		}
		return nil, fmt.Errorf("job %s: %s: %w", res.ID, obj, err)
	}
	pub, err := get(res.Public, false)
	if err != nil {
		return err
	}
	proof, err := get(res.Proof, false)
	if err != nil {
		return err
	}
	js, err := get(res.Proof+".json", true)
	if err != nil {
		return err
	}
	if res.Public, err = dir.Write(path.Base(res.Public), pub); err != nil {
		return err
	}
	if js != nil {
		if _, err = dir.Write(path.Base(res.Proof)+".json", js); err != nil {
			return err
		}
	}
	// The proof last, as prove writes it: its presence means the rest is there.
	res.Proof, err = dir.Write(path.Base(res.Proof), proof)
	return err
}
