package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// A verified proof says that its public inputs are proven for a key, not
// that they are those the user submitted: a worker (anyone with access to
// the queue) can store a valid proof of its own witness under a job's id.
// Statements anchor the public inputs as --circuit anchors the key: in the
// user's own files, the jobs file given to zkpipe submit.

// Values of a result line's Statement (zkpipe results --jobs).
const Bound = stream.Bound

// Statements are the jobs of one jobs file, by id: for each, where its
// submitted public inputs are, or why they are not known before proving.
type Statements struct {
	jobs map[string]statement
}

// statement is one job's (stream.Statement, whose binding the fleet shares
// with prove --skip-done).
type statement struct{ stream.Statement }

// ReadStatements reads the job lines of path, the jobs file given to
// zkpipe submit, as submit reads them: witness and wtns paths are taken as
// submit opens them (relative to the working directory), and lines that
// submit refuses (malformed, a duplicate id) are skipped as it skips them.
// The witness files themselves are read when a job's proof is checked. The
// read is bounded (boundedread): a FIFO or a stalled mount fails it.
func ReadStatements(ctx context.Context, path string) (*Statements, error) {
	o := boundedread.Options{MinRate: 1 << 20}
	jobs, err := boundedread.Read(ctx, path, o, func(f *boundedread.File) (map[string]statement, error) {
		return readStatements(ctx, f)
	})
	if err != nil {
		return nil, fmt.Errorf("--jobs: %w", err)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("--jobs %s: no valid job line: not the jobs file given to zkpipe submit?", path)
	}
	return &Statements{jobs: jobs}, nil
}

func readStatements(ctx context.Context, f *boundedread.File) (map[string]statement, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := make(chan stream.Line)
	readErr := make(chan error, 1)
	go func() { readErr <- stream.Read(ctx, f, lines) }()
	jobs := map[string]statement{}
	for l := range lines {
		if l.Err != nil {
			continue // refused by submit too: never queued
		}
		if l.Request.IsPartitioned() {
			if l.Request.CheckPartitions(MaxPartitions) != nil {
				continue // refused by submit
			}
			for i := range l.Request.Partitions {
				p := l.Request.Partition(i)
				jobs[p.ID] = statementOf(p)
			}
			continue
		}
		jobs[l.Request.ID] = statementOf(l.Request)
	}
	return jobs, <-readErr
}

func statementOf(r stream.Request) statement { return statement{stream.StatementOf(r)} }

// of returns job id's statement; false for a job not in the file (or no
// file: s is nil).
func (s *Statements) of(id string) (statement, bool) {
	if s == nil {
		return statement{}, false
	}
	st, ok := s.jobs[id]
	return st, ok
}

// errOtherStatement marks a verified proof of other public inputs than the
// job's submitted ones.
var errOtherStatement = stream.ErrOtherStatement

// inputsFrom reads the public inputs of the witness at path (a wtns when
// wtns is set, else a gnark witness), nPublic of them for a wtns: from the
// user's files (localInputs) or the witness store (Queue.storedInputs).
type inputsFrom = stream.PublicReader

// localInputs reads a witness file, as submit uploads it, bounded like any
// witness read.
func localInputs(ctx context.Context, path string, wtns bool, nPublic int) ([]string, error) {
	if wtns {
		return circomsrc.ReadWtnsPublic(ctx, path, nPublic, boundedread.Options{})
	}
	return gnarksrc.ReadPublicInputs(ctx, path, boundedread.Options{})
}

// errNoStoredWitness marks a job whose witness is not (or no longer) in
// the witness store: nothing to bind its proof to.
var errNoStoredWitness = errors.New("not in the witness store")

// storedInputs reads the public inputs of the witness object that ref
// names (a job's witness as submit uploaded it): only its first bytes, and
// within boundedread's default deadline.
func (q *Queue) storedInputs(ctx context.Context, ref string, wtns bool, nPublic int) ([]string, error) {
	obj, ok := strings.CutPrefix(ref, witnessRef)
	if !ok {
		return nil, fmt.Errorf("witness %q: %w", ref, errNoStoredWitness)
	}
	ctx, cancel := context.WithTimeout(ctx, boundedread.DefaultTimeout)
	defer cancel()
	r, err := q.getObject(ctx, WitnessBucket, obj)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("witness %s: %w", obj, errNoStoredWitness)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var in []string
	if wtns {
		in, err = circomsrc.ParseWtnsPublic(r, nPublic)
	} else {
		var info *jetstream.ObjectInfo
		if info, err = r.Info(); err == nil {
			in, err = gnarksrc.ParsePublicInputs(r, int64(info.Size))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", obj, err)
	}
	return in, nil
}

// bind compares the public inputs of a proof that v verified with those
// the job was submitted with, read by read (stream.Statement.Bind).
func (st statement) bind(ctx context.Context, v *Verifier, inputs []string, read inputsFrom) (string, error) {
	return st.Bind(ctx, v.publicCount(), inputs, read)
}

// publicCount is how many public inputs v's key takes (the one wire
// excluded): how many signals of a wtns are public.
func (v *Verifier) publicCount() int { return v.outputs.NbPublic() }
