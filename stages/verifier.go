package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/zkpipe/zkpipe/blob"
)

// Verifier checks the outputs a job of one circuit stored, against that
// circuit's verifying key: the one check of stored outputs (the engine's
// resume, a fleet's results and workers, zkpipe verify, fileprove), and,
// with Outputs, the one place a source names a job's outputs. Outputs are
// read through a blob.Reader (a directory, a store's files, memory), each
// bounded by what it can hold: nothing read is called proved until Check
// has accepted it. A Verifier is safe for concurrent use.
type Verifier interface {
	// Outputs names job id's outputs as its source's Emit writes them.
	Outputs(id string) Outputs
	// Beside names the outputs of the proof stored as proof, whatever its
	// name (zkpipe verify's arguments): its public inputs beside it, named
	// as Outputs names them (gnark: p.proof's p.public).
	Beside(proof string) Outputs
	// Check reads o.Proof and o.Public from r and verifies them with the
	// key, then makes o's other outputs again from the verified proof
	// (Verified.Made). An error wraps fs.ErrNotExist when r holds no
	// o.Proof (the job stored nothing), and says why otherwise.
	Check(ctx context.Context, r blob.Reader, o Outputs) (Verified, error)
	// NbPublic is how many public values a proof's statement holds under
	// the key, the constant one wire excluded (gnark: its public witness's
	// values, commitments' included; circom: nPublic): how many of a
	// witness's values a statement binds.
	NbPublic() int
}

// Outputs are the names of a job's outputs: its proof, its public inputs,
// then those that may be made from the proof (gnark: ID.proof.json, and
// ID.calldata, made where the circuit's proofs have calldata).
type Outputs struct {
	Proof, Public string
	Made          []Made
}

// Made is an output made from a verified proof. Kept: the job stores it as
// made, so a stored copy that differs is another job's or a damaged one (a
// resume proves the job again); else it is written again from the proof
// wherever it is missing (calldata, which follows the run's options).
// Calldata marks the proof's Solidity calldata (a result line's calldata).
type Made struct {
	Name     string
	Kept     bool
	Calldata bool
	Data     []byte // in Verified.Made: made from the verified proof
}

// Verified is a job's stored proof that passed Check.
type Verified struct {
	Outputs
	// Proof and Public are the stored bytes as read.
	Proof, Public []byte
	// PublicInputs are the proof's public inputs, decimal.
	PublicInputs []string
}

// Calldata is the name of the made calldata, "" when none was made.
func (v Verified) Calldata() string {
	for _, m := range v.Made {
		if m.Calldata {
			return m.Name
		}
	}
	return ""
}

// HoldsKept checks that r holds each of v's kept outputs (gnark's
// ID.proof.json) as Check made it: another job's, a damaged one or a
// missing one is an error, never fs.ErrNotExist (the job's proof is there:
// its outputs are not what it wrote).
func (v Verified) HoldsKept(ctx context.Context, r blob.Reader) error {
	for _, m := range v.Made {
		if !m.Kept {
			continue
		}
		got, err := r.Read(ctx, m.Name, int64(len(m.Data)))
		if errors.Is(err, fs.ErrNotExist) {
			err = errors.New("missing")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", r.Where(m.Name), err)
		}
		if !bytes.Equal(got, m.Data) {
			return fmt.Errorf("%s does not hold %s's proof", r.Where(m.Name), r.Where(v.Outputs.Proof))
		}
	}
	return nil
}

// Suffixes are what end the names of v's job outputs after the job's ID
// (every name a Verifier gives is the ID and one of them).
func Suffixes(v Verifier) []string {
	o := v.Outputs("")
	s := []string{o.Proof, o.Public}
	for _, m := range o.Made {
		s = append(s, m.Name)
	}
	return s
}
