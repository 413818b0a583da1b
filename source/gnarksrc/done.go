package gnarksrc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
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
	// A proof is a few hundred bytes (more with commitments); a public
	// witness 12 bytes and 32 a public input: bound both reads by that.
	nbPublic := len(s.vk.G1.K) - 1
	proofData, err := readLimited(em.Proof, 1<<16)
	if err != nil {
		return stages.Emitted{}, err
	}
	pubData, err := readLimited(em.Public, 12+32*int64(nbPublic))
	if err != nil {
		return stages.Emitted{}, err
	}
	proof := new(groth16bn254.Proof)
	if _, err := proof.ReadFrom(bytes.NewReader(proofData)); err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", em.Proof, err)
	}
	pub, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		return stages.Emitted{}, err
	}
	if err := pub.UnmarshalBinary(pubData); err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", em.Public, err)
	}
	if err := groth16.Verify(proof, s.vk, pub); err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", em.Proof, err)
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

// readLimited reads the file at path, refusing one longer than limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: longer than the %d bytes it can be", path, limit)
	}
	return data, nil
}
