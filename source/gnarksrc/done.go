package gnarksrc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
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
	pub, err := verifyFiles(context.Background(), s.vk, em.Proof, em.Public)
	if err != nil {
		return stages.Emitted{}, err
	}
	vec, ok := pub.Vector().(fr.Vector)
	if !ok {
		return stages.Emitted{}, fmt.Errorf("%s: not a BN254 witness", em.Public)
	}
	em.PublicInputs = make([]string, 0, len(vec))
	for _, v := range vec {
		em.PublicInputs = append(em.PublicInputs, v.String())
	}
	return em, nil
}
