package circomsrc

import (
	"context"
	"errors"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/stream"
)

// PublicInputs are the public inputs a proof of req must have, known
// before it is proven (prove --skip-done binds a stored proof to them): a
// wtns job's public signals, reading only the wtns's header and first
// values, bounded as Parse reads it. An input job's are known only once the
// wasm has computed its witness, in synthesize: known is false, and such a
// job is proven again rather than answered from files nothing binds to it.
func (s *Source) PublicInputs(ctx context.Context, req stream.Request) (inputs []string, known bool, err error) {
	switch {
	case req.Witness != "" || req.Generate != nil || (req.Wtns != "" && len(req.Input) > 0):
		return nil, true, errors.New("not a job this circuit can prove (parse says why)")
	case req.Wtns == "":
		return nil, false, nil
	}
	in, err := ReadWtnsPublic(ctx, req.Wtns, s.vk.NPublic, boundedread.Options{Timeout: s.readTimeout})
	return in, true, err
}
