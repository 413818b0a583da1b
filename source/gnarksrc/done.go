package gnarksrc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/zkpipe/zkpipe/evm"
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
	vec, ok := pub.Vector().(fr.Vector)
	if !ok {
		return stages.Emitted{}, fmt.Errorf("%s: not a BN254 witness", em.Public)
	}
	if s.opts.Calldata {
		// derived again from the verified files: an earlier run may not have
		// asked for it, or died between writing the two
		p, ok := proof.(*groth16bn254.Proof)
		if !ok {
			return stages.Emitted{}, fmt.Errorf("%s: not a BN254 proof", em.Proof)
		}
		if em.Calldata, err = stages.Dir(dir).Write(id+".calldata", evm.CalldataHex(p, vec)); err != nil {
			return stages.Emitted{}, err
		}
	}
	em.PublicInputs = make([]string, 0, len(vec))
	for _, v := range vec {
		em.PublicInputs = append(em.PublicInputs, decimal(&v))
	}
	return em, nil
}
