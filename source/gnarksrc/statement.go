package gnarksrc

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/source/boundedread"
	"github.com/zkpipe/zkpipe/stream"
)

// PublicInputs are the public inputs a proof of req must have, known
// before it is proven (prove --skip-done binds a stored proof to them):
// those of its witness file (only the header and the public values are
// read, bounded as Parse reads a witness), or those of the witness its seed
// generates (a built-in's witness costs a small share of its proof). known
// is true for every gnark job.
func (s *Source) PublicInputs(ctx context.Context, req stream.Request) (inputs []string, known bool, err error) {
	switch {
	case req.Wtns != "" || len(req.Input) > 0 || (req.Witness != "" && req.Generate != nil):
		// not a gnark job: Parse says why
	case req.Witness != "":
		in, err := ReadPublicInputs(ctx, req.Witness, boundedread.Options{Timeout: s.opts.ReadTimeout})
		return in, true, err
	case req.Generate != nil && s.builtin != nil:
		w, err := s.builtin.Witness(s.size, req.Generate.Seed)
		if err != nil {
			return nil, true, fmt.Errorf("generate: %w", err)
		}
		pub, err := w.Public()
		if err != nil {
			return nil, true, err
		}
		vec, ok := pub.Vector().(fr.Vector)
		if !ok {
			return nil, true, fmt.Errorf("generate: not a BN254 witness")
		}
		in := make([]string, len(vec))
		for i := range vec {
			in[i] = decimal(&vec[i])
		}
		return in, true, nil
	}
	return nil, true, fmt.Errorf("not a job this circuit can prove (parse says why)")
}
