package gnarksrc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkpipe/zkpipe/stages"
)

// Done reports the outputs a finished job id left in dir (ID.proof and
// ID.public, as Emit writes them), after checking them with gnark's
// groth16.Verify against the circuit's verifying key. It returns an error
// wrapping fs.ErrNotExist when the job left no proof, and another error when
// its files exist but do not make a valid proof.
func (s *Source) Done(dir, id string) (stages.Emitted, error) {
	em := stages.Emitted{Proof: filepath.Join(dir, id+".proof"), Public: filepath.Join(dir, id+".public")}
	if _, err := os.Stat(em.Proof); err != nil {
		return stages.Emitted{}, err
	}
	proof, pub, err := verifyFiles(context.Background(), s.vk, s.opts.HashToField, em.Proof, em.Public)
	if err != nil {
		return stages.Emitted{}, err
	}
	if s.opts.Calldata {
		cd, err := calldataHex(proof, pub)
		if err != nil {
			return stages.Emitted{}, fmt.Errorf("%s: %w", em.Proof, err)
		}
		if em.Calldata, err = stages.Dir(dir).Write(id+".calldata", cd); err != nil {
			return stages.Emitted{}, err
		}
	}
	if em.PublicInputs, err = publicDecimals(pub); err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", em.Public, err)
	}
	return em, nil
}
