package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// ErrInputClash marks an output path that is one of the run's inputs:
// --results naming the jobs file truncates it before a job is read, and a
// witness that is the results file is overwritten while it is read. It is
// ioplan's error, which every command's check of its outputs gives.
var ErrInputClash = ioplan.ErrClash

// Output is a file a run writes outside its output directory (the results
// file), named as the user named it ("--results").
type Output struct {
	Flag, Path string
}

// Files are the files a run reads or writes, by identity (os.SameFile):
// symlinks, hard links and spellings of one path (./a, a) are one file.
type Files = ioplan.Files

// InOutDir reports whether path, symlinks resolved, is a file the engine
// writes (or locks) in the output directory out: its parent is out and its
// name is an output's (an ID and one of suffixes, which end the names the
// circuits' sources write: stages.Suffixes of their Verifiers; gnark's
// ID.proof, ID.public, ID.proof.json, ID.calldata, circom's ID.proof.json,
// ID.public.json), a temporary file's, or the lock, or it is a partition's
// output in the subdirectory of its request (REQUEST/INDEX.proof, …; its
// temporary files too). Such a file is replaced while the run goes, so it
// can be no input of it.
func InOutDir(out, path string, suffixes []string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path // not there (yet): its name is all there is
	}
	base := filepath.Base(real)
	if parent := filepath.Dir(real); !sameDir(out, parent) {
		// a partition's: out/REQUEST/INDEX.suffix
		request := filepath.Base(parent)
		if !sameDir(out, filepath.Dir(parent)) || !stream.ValidID(request) {
			return false
		}
		return blob.IsTempName(base) || stream.IsPartitionName(request, base, suffixes)
	}
	if base == LockFile || blob.IsTempName(base) {
		return true
	}
	for _, s := range suffixes {
		if id, ok := strings.CutSuffix(base, s); ok && stream.ValidID(id) {
			return true
		}
	}
	return false
}

func sameDir(a, b string) bool { return ioplan.SameDir(a, b) }

// checkWitness refuses a job's witness (or wtns) that the run writes: one
// of o.Writes or a file of the output directory. A witness in hand
// (Job.WitnessInput) is no file: its name is only a name.
func (e *Engine) checkWitness(j *stages.Job) error {
	if j.WitnessInput != nil {
		return nil
	}
	req := j.Request
	for _, p := range []string{req.Witness, req.Wtns} {
		if p == "" {
			continue
		}
		// stat'ed per job: the results file is created once the engine is open
		var writes Files
		for _, w := range e.opts.Writes {
			writes.Add(w.Flag+" "+w.Path, w.Path)
		}
		if name, ok := writes.Find(p); ok {
			return fmt.Errorf("witness %s is %s, which this run writes: %w", p, name, ErrInputClash)
		}
		if e.out != nil && InOutDir(e.out.Path(), p, e.outputSuffixes()) {
			return fmt.Errorf("witness %s is a file this run writes in engine.Options.Out %s: %w", p, e.out.Path(), ErrInputClash)
		}
	}
	return nil
}

// HoldInput reserves bytes of a job's input that the caller is about to
// hold in memory (a fleet worker's witness, fetched from its store before
// the job enters) with the memory governor, waiting for room as a job's
// admission does: the job's own reservation comes only after parse, when
// the bytes are decoded. The caller closes the hold once they are dropped.
// Its errors are the governor's (a *mem.TooLargeError: never fits), ctx's,
// and ErrClosed.
func (e *Engine) HoldInput(ctx context.Context, job string, bytes int64) (*mem.Reservation, error) {
	if !e.enter() {
		return nil, ErrClosed
	}
	defer e.exit()
	return e.gov.Hold(ctx, job+" (its witness, fetched)", bytes)
}

// outputSuffixes end the names the engine's circuits write in its output
// directory (InOutDir).
func (e *Engine) outputSuffixes() []string {
	var out []string
	for _, c := range e.core.Circuits() {
		for _, s := range stages.Suffixes(c.Source.Verifier()) {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
