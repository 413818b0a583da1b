package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/source/boundedread"
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
const (
	Bound = "bound" // the proof's public inputs are the submitted witness's
	// not bound: the job's public inputs are known only once it is proven
	notBoundGenerate = "not bound (generate job)"
	notBoundInput    = "not bound (input job)"
)

// Statements are the jobs of one jobs file, by id: for each, where its
// submitted public inputs are, or why they are not known before proving.
type Statements struct {
	jobs map[string]statement
}

// statement is one job's: the witness file whose public values its proof
// must have (a gnark witness or a circom wtns), or why there is none.
type statement struct {
	witness, wtns string
	unbound       string // a Statement value, when there is no file
}

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
		jobs[l.Request.ID] = statementOf(l.Request)
	}
	return jobs, <-readErr
}

func statementOf(r stream.Request) statement {
	switch {
	case r.Witness != "":
		return statement{witness: r.Witness}
	case r.Wtns != "":
		return statement{wtns: r.Wtns}
	case r.Generate != nil:
		return statement{unbound: notBoundGenerate}
	default:
		return statement{unbound: notBoundInput}
	}
}

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
var errOtherStatement = errors.New("the stored proof is for other public inputs")

// inputsFrom reads the public inputs of the witness at path (a wtns when
// wtns is set, else a gnark witness), nPublic of them for a wtns: from the
// user's files (localInputs) or the witness store (Queue.storedInputs).
type inputsFrom func(ctx context.Context, path string, wtns bool, nPublic int) ([]string, error)

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
	r, err := q.Witness.Get(ctx, obj)
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
// the job was submitted with, read by read, and returns the result line's
// Statement. An error wrapping errOtherStatement is a mismatch; any other,
// a witness that could not be read.
func (st statement) bind(ctx context.Context, v *Verifier, inputs []string, read inputsFrom) (string, error) {
	file, wtns := st.witness, false
	if st.wtns != "" {
		file, wtns = st.wtns, true
	}
	if file == "" {
		return st.unbound, nil
	}
	want, err := read(ctx, file, wtns, v.publicCount())
	if err != nil {
		return "", fmt.Errorf("its submitted public inputs cannot be read: %w", err)
	}
	if len(want) != len(inputs) {
		return "", fmt.Errorf("%w: %d of them, the submitted witness %s has %d", errOtherStatement, len(inputs), file, len(want))
	}
	for i := range want {
		if want[i] != inputs[i] {
			return "", fmt.Errorf("%w: public input %d is %s, the submitted witness %s has %s", errOtherStatement, i, inputs[i], file, want[i])
		}
	}
	return Bound, nil
}

// publicCount is how many public inputs v's key takes (the one wire
// excluded): how many signals of a wtns are public.
func (v *Verifier) publicCount() int {
	if v.gnark != nil {
		return v.gnark.NbPublicWitness()
	}
	return v.circom.NPublic
}
