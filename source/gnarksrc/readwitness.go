package gnarksrc

import (
	"context"

	"github.com/consensys/gnark/backend"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/blob/boundedread"
)

// ReadWitness reads the gnark binary full witness at path as this circuit's
// parse stage does (bounded in size and time; checked against the
// circuit's public and secret counts): for gnark's own prover in a bench of
// a user's circuit. Its errors name the path.
func (s *Source) ReadWitness(ctx context.Context, path string, name string) (witness.Witness, error) {
	return readWitnessFile(ctx, path, s.witnessShape(name), boundedread.Options{Timeout: s.opts.ReadTimeout})
}

// ProverOptions are the options gnark's own groth16.Prove needs to prove
// this circuit as zkpipe does: its hash-to-field and the user's hints.
func (s *Source) ProverOptions() []backend.ProverOption {
	return []backend.ProverOption{s.opts.HashToField.ProverOption(), backend.WithSolverOptions(s.solve...)}
}
