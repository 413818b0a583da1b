package stream

import (
	"context"
	"errors"
	"fmt"
)

// A verified proof says that its public inputs are proven for a key, not
// that they are the job's: a proof of job b's witness copied under job a's
// name verifies too. Whoever answers a job from a proof it did not just
// make (prove --skip-done, results --jobs, a fleet worker's redelivery)
// binds the proof's public inputs to the job's own witness first.

// Values of a result line's Statement (zkpipe results --jobs).
const (
	Bound = "bound" // the proof's public inputs are the job's witness's
	// not bound: the job's public inputs are known only once it is proven
	NotBoundGenerate = "not bound (generate job)"
	NotBoundInput    = "not bound (input job)"
)

// ErrOtherStatement marks a verified proof of other public inputs than the
// job's own.
var ErrOtherStatement = errors.New("the stored proof is for other public inputs")

// Statement is where a job's public inputs are known before it is proven:
// the witness file whose public values its proof must have (a gnark witness
// or a circom wtns), or why there is none (Unbound, a Statement value).
type Statement struct {
	Witness, Wtns string
	Unbound       string
}

// StatementOf is r's statement.
func StatementOf(r Request) Statement {
	switch {
	case r.Witness != "":
		return Statement{Witness: r.Witness}
	case r.Wtns != "":
		return Statement{Wtns: r.Wtns}
	case r.Generate != nil:
		return Statement{Unbound: NotBoundGenerate}
	default:
		return Statement{Unbound: NotBoundInput}
	}
}

// PublicReader reads the public inputs of the witness at path (a wtns when
// wtns is set, else a gnark witness), nPublic of them for a wtns, from
// wherever the caller keeps witnesses (the user's files, a store).
type PublicReader func(ctx context.Context, path string, wtns bool, nPublic int) ([]string, error)

// Bind compares inputs, the public inputs of a verified proof of a key that
// takes nPublic, with those of st's witness, read by read, and returns the
// result line's Statement value. An error wrapping ErrOtherStatement is a
// mismatch; any other, a witness that could not be read.
func (st Statement) Bind(ctx context.Context, nPublic int, inputs []string, read PublicReader) (string, error) {
	file, wtns := st.Witness, false
	if st.Wtns != "" {
		file, wtns = st.Wtns, true
	}
	if file == "" {
		return st.Unbound, nil
	}
	want, err := read(ctx, file, wtns, nPublic)
	if err != nil {
		return "", fmt.Errorf("its submitted public inputs cannot be read: %w", err)
	}
	if err := SamePublicInputs(want, inputs, "the submitted witness "+file); err != nil {
		return "", err
	}
	return Bound, nil
}

// SamePublicInputs checks that got, a verified proof's public inputs, are
// want, those of the job's witness (named by whose, for the error). A
// difference wraps ErrOtherStatement.
func SamePublicInputs(want, got []string, whose string) error {
	if len(want) != len(got) {
		return fmt.Errorf("%w: %d of them, %s has %d", ErrOtherStatement, len(got), whose, len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Errorf("%w: public input %d is %s, %s has %s", ErrOtherStatement, i, got[i], whose, want[i])
		}
	}
	return nil
}
