package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/pipeline"
	"github.com/zkpipe/zkpipe/stages"
)

// Prove proves one witness of the named circuit ("" with one loaded) and
// returns the proof, as gnark's groth16.Prove(ccs, pk, w) does, on the
// engine's backend with its resident keys, under its memory governor. The
// proof has passed the check against the circuit's verifying key that a
// stream's proofs pass, even where the circuit's source skips it for
// streams (gnarksrc.Options.SkipVerify); nothing is written to the output
// directory (an engine with Options.Output opens none: then nothing at
// all touches the disk once the circuits are loaded).
//
// Prove is safe from many goroutines at once, and beside a Run: the calls'
// jobs share one pipeline of the engine's shape (started at the first
// call, ended by Close), which runs beside a Run's and draws on the same
// governor and backend. It returns ctx's error as soon as ctx is done (the
// job then ends at its next stage), and ErrClosed once Close has begun.
// w is a full witness (frontend.NewWitness, or witness.New and
// UnmarshalBinary), read while the job solves: it must not change until
// Prove returns. The proof is of the circuit's curve (*groth16bn254.Proof
// for BN254, *groth16bls12381.Proof for BLS12-381). Errors name the job
// "prove-N" (its number on this engine) and the stage that failed.
func (e *Engine) Prove(ctx context.Context, circuit string, w witness.Witness) (groth16.Proof, error) {
	if w == nil {
		return nil, errors.New("engine: Prove: no witness")
	}
	if !e.enter() {
		return nil, ErrClosed
	}
	defer e.exit()
	c, err := e.core.Circuit(circuit)
	if err != nil {
		return nil, fmt.Errorf("engine: Prove: %w", err)
	}
	if k := c.Source.Kind(); k != "gnark" {
		return nil, fmt.Errorf("engine: Prove: circuit %s is a %s circuit; Prove takes gnark circuits (circomsrc.ProveWtns circom's)", c.Name, k)
	}
	r, err := e.proveJob(ctx, c, w)
	if err != nil {
		return nil, err
	}
	proof, ok := r.Value.(groth16.Proof)
	if !ok || proof == nil {
		return nil, fmt.Errorf("engine: Prove: circuit %s's source gave a %T, not a gnark proof", c.Name, r.Value)
	}
	return proof, nil
}

// ProveInput is the untyped entry under Prove and a source's typed ones
// (circomsrc.ProveWtns, which declares the interface it takes): it proves
// one job of the named circuit ("" with one loaded) whose witness w is in
// hand, as the circuit's source takes it (blob.Value, stages.Job.WitnessInput), and
// returns what the source's Emit reported, the proof among it
// (stages.Emitted.Value), as Prove does. kind is the source kind w is for
// ("circom"): another circuit's is refused, naming both and entry, the
// caller's name ("ProveWtns"). Errors begin "engine: entry:".
func (e *Engine) ProveInput(ctx context.Context, circuit, kind, entry string, w any) (stages.Emitted, error) {
	if w == nil {
		return stages.Emitted{}, fmt.Errorf("engine: %s: no witness", entry)
	}
	if !e.enter() {
		return stages.Emitted{}, ErrClosed
	}
	defer e.exit()
	c, err := e.core.Circuit(circuit)
	if err != nil {
		return stages.Emitted{}, fmt.Errorf("engine: %s: %w", entry, err)
	}
	if k := c.Source.Kind(); k != kind {
		return stages.Emitted{}, fmt.Errorf("engine: %s: circuit %s is a %s circuit; %s takes %s circuits", entry, c.Name, k, entry, kind)
	}
	return e.proveJob(ctx, c, w)
}

// provers is the pipeline that Prove's jobs go through, and who waits for
// which job.
type provers struct {
	in    chan *stages.Job
	done  chan struct{} // closed when the pipeline has stopped (Close)
	stop  context.CancelFunc
	next  atomic.Int64 // numbers the jobs' ids
	reply sync.Map     // *stages.Job → chan pipeline.Result[*stages.Job]
}

// startProvers starts the Prove pipeline at the first call; nil once
// Close has begun.
func (e *Engine) startProvers() *provers {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	if e.provers != nil {
		return e.provers
	}
	ctx, stop := context.WithCancel(context.Background())
	pr := &provers{in: make(chan *stages.Job), done: make(chan struct{}), stop: stop}
	e.provers = pr
	e.busy.Add(1) // Close waits for the pipeline to stop
	p := e.core.Pipeline(nil)
	go func() {
		defer e.busy.Done()
		defer close(pr.done)
		// Its error is ctx's: the pipeline stops only when Close cancels it.
		_ = e.core.Run(ctx, p, pr.in, func(cr CoreResult) {
			r := cr.Result
			// counted before the reply: a caller's Snapshot after its
			// Prove returns must include its proof
			switch {
			case r.Err == nil:
				e.proved.Add(1)
			case r.Job.Ctx.Err() == nil: // a caller that gave up is no failure
				e.failed.Add(1)
			}
			if ch, ok := pr.reply.LoadAndDelete(r.Job); ok {
				ch.(chan pipeline.Result[*stages.Job]) <- r // buffered: never blocks
			}
		})
	}()
	return pr
}

// proveJob runs one job of c with witness w through the Prove pipeline
// and returns what its source emitted.
func (e *Engine) proveJob(ctx context.Context, c *stages.Circuit, w any) (stages.Emitted, error) {
	if err := ctx.Err(); err != nil {
		return stages.Emitted{}, err
	}
	pr := e.startProvers()
	if pr == nil {
		return stages.Emitted{}, ErrClosed
	}
	j := &stages.Job{Circuit: c, WitnessInput: blob.Value("its witness value", w), Out: new(blob.Memory), Verify: true, Ctx: ctx}
	j.ID = fmt.Sprintf("prove-%d", pr.next.Add(1))
	j.Request.Circuit = c.Name
	reply := make(chan pipeline.Result[*stages.Job], 1)
	pr.reply.Store(j, reply)
	select {
	case pr.in <- j:
	case <-ctx.Done():
		pr.reply.Delete(j)
		return stages.Emitted{}, ctx.Err()
	case <-pr.done:
		pr.reply.Delete(j)
		return stages.Emitted{}, ErrClosed
	}
	select {
	case r := <-reply:
		if err := ctx.Err(); err != nil {
			return stages.Emitted{}, err // the job may have failed for it
		}
		if r.Err != nil {
			return stages.Emitted{}, r.Err
		}
		return r.Job.Emitted, nil
	case <-ctx.Done():
		return stages.Emitted{}, ctx.Err()
	case <-pr.done:
		return stages.Emitted{}, ErrClosed
	}
}
