package gnarksrc

import (
	"context"
	"fmt"

	"github.com/zkpipe/zkpipe/blob/boundedread"
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
		in, err := boundedread.Read(ctx, req.Witness, boundedread.Options{Timeout: s.opts.ReadTimeout}, func(f *boundedread.File) ([]string, error) {
			in, err := ParsePublicInputsOf(s.curve, f, f.Size())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", req.Witness, err)
			}
			return in, nil
		})
		return in, true, err
	case req.Generate != nil && s.builtin != nil:
		w, err := s.builtin.WitnessOn(s.curve, s.size, req.Generate.Seed)
		if err != nil {
			return nil, true, fmt.Errorf("generate: %w", err)
		}
		pub, err := w.Public()
		if err != nil {
			return nil, true, err
		}
		in, err := publicDecimals(pub)
		if err != nil {
			return nil, true, fmt.Errorf("generate: %w", err)
		}
		return in, true, nil
	}
	return nil, true, fmt.Errorf("not a job this circuit can prove (parse says why)")
}
