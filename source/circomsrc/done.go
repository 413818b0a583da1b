package circomsrc

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/zkpipe/zkpipe/stages"
)

// Done reports the outputs a finished job id left in dir (ID.proof.json and
// ID.public.json, as Emit writes them), after checking the proof against the
// zkey's verifying key. It returns an error wrapping fs.ErrNotExist when the
// job left no proof, and another error when its files exist but do not make
// a valid proof.
func (s *Source) Done(dir, id string) (stages.Emitted, error) {
	em := stages.Emitted{Proof: filepath.Join(dir, id+".proof.json"), Public: filepath.Join(dir, id+".public.json")}
	// ReadProof and ReadPublic bound what they read by what the files can be
	ctx := context.Background()
	proof, err := ReadProof(ctx, em.Proof)
	if err != nil {
		return stages.Emitted{}, err
	}
	public, err := ReadPublic(ctx, em.Public, s.vk.Curve, s.vk.NPublic)
	if err != nil {
		return stages.Emitted{}, err
	}
	if err := s.vk.Verify(proof, public); err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", em.Proof, err)
	}
	em.PublicInputs = curveOf(s.vk.Curve).decimals(public)
	return em, nil
}
