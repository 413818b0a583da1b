package gnarksrc

import (
	"context"

	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/source/boundedread"
)

// ReadWitness reads the gnark binary full witness at path as this circuit's
// parse stage does (bounded in size and time; checked against the
// circuit's public and secret counts): for gnark's own prover in a bench of
// a user's circuit. Its errors name the path.
func (s *Source) ReadWitness(ctx context.Context, path string, name string) (witness.Witness, error) {
	return readWitnessFile(ctx, path, s.witnessShape(name), boundedread.Options{Timeout: s.opts.ReadTimeout})
}
