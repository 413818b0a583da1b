// Package fileprove proves one circom witness from files to files, in the
// argument order and output shapes of snarkjs and rapidsnark
// (`snarkjs groth16 prove`, `snarkjs groth16 fullprove`, `prover`), through
// the same engine (GPU when present) as zkpipe's streams.
package fileprove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// Job is one proof: a zkey and either a witness (Wtns) or the circuit's
// inputs (Input, a JSON file) with its witness calculator (Wasm); Proof and
// Public are the files to write, snarkjs's proof.json and public.json.
type Job struct {
	Zkey, Wtns  string
	Input, Wasm string
	Proof       string
	Public      string
	ReadTimeout time.Duration // one witness or input file, open to last byte; 0: boundedread's default
	LoadTimeout time.Duration // each circuit file; 0: boundedread's default
}

// id names the job inside the engine.
const id = "proof"

// Prove proves j with an engine of opts (its outputs kept in memory:
// Options.Output, no directory) and writes j.Public and j.Proof, each
// atomically, only once the proof the engine wrote passes the zkey's
// verifying key (its Verifier, the check snarkjs groth16 verify makes). Any
// other outcome is an error naming the file or the stage that failed, and
// leaves j.Proof and j.Public as they were.
func Prove(ctx context.Context, opts engine.Options, j Job) error {
	if err := j.check(); err != nil {
		return err
	}
	req := stream.Request{ID: id}
	if j.Wtns != "" {
		abs, err := filepath.Abs(j.Wtns)
		if err != nil {
			return err
		}
		req.Wtns = abs
	} else {
		in, err := boundedread.ReadAll(ctx, j.Input, stream.MaxLineBytes, boundedread.Options{Timeout: j.ReadTimeout})
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		if !json.Valid(in) {
			return fmt.Errorf("input %s: not JSON", j.Input)
		}
		req.Input = in
	}

	circ, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: j.Zkey, Wasm: j.Wasm, ReadTimeout: j.ReadTimeout, LoadTimeout: j.LoadTimeout})
	if err != nil {
		return err
	}
	v := circ.Source.Verifier()
	out := &blob.Memory{}
	opts.Out, opts.Output = "", out
	eng, err := engine.New(ctx, opts, circ) // from here the engine owns circ
	if err != nil {
		return err
	}
	defer eng.Close()

	jobs := make(chan stream.Line, 1)
	jobs <- stream.Line{Number: 1, Request: req}
	close(jobs)
	var got *stream.Result
	if err := eng.Run(ctx, jobs, func(r stream.Result) error { got = &r; return nil }); err != nil {
		return err
	}
	switch {
	case got == nil:
		return errors.New("the engine returned no result")
	case got.Error != "":
		return errors.New(strings.TrimPrefix(got.Error, "job "+id+": ")) // the one job needs no name
	}
	ok, err := v.Check(ctx, out, stages.Outputs{Proof: got.Proof, Public: got.Public})
	if err != nil {
		return fmt.Errorf("the proof written does not verify (%w); nothing written", err)
	}
	// snarkjs's outputs, each replaced atomically, the proof last, once
	// both are checked again (the proof took a while: a path may have
	// become a directory meanwhile)
	if err := j.check(); err != nil {
		return err
	}
	for _, f := range []struct {
		data []byte
		to   string
	}{{ok.Public, j.Public}, {ok.Proof, j.Proof}} {
		if _, err := blob.Dir(filepath.Dir(f.to)).Write(filepath.Base(f.to), f.data); err != nil {
			return err
		}
	}
	return nil
}

// check refuses a job whose outputs would overwrite its inputs or each other.
func (j Job) check() error {
	if (j.Wtns == "") == (j.Input == "") {
		return errors.New("give a witness (.wtns) or an input.json, one of them")
	}
	if j.Input != "" && j.Wasm == "" {
		return errors.New("an input.json needs the circuit's witness calculator (.wasm)")
	}
	if j.Proof == "" || j.Public == "" {
		return errors.New("give the proof.json and public.json to write")
	}
	// every output checked before any is written: a proof path that is a
	// directory must not leave a new public.json behind
	var plan ioplan.Plan
	for _, in := range []struct{ name, path string }{{"the zkey", j.Zkey}, {"the witness", j.Wtns}, {"the input", j.Input}, {"the wasm", j.Wasm}} {
		if in.path != "" {
			plan.Read(in.name+" "+in.path, in.path)
		}
	}
	plan.Replace("the proof", j.Proof)
	plan.Replace("the public inputs", j.Public)
	return plan.Check()
}
