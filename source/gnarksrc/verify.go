package gnarksrc

import (
	"bytes"
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/source/boundedread"
)

// ReadVerifyingKey reads a gnark verifying key file.
func ReadVerifyingKey(path string) (groth16.VerifyingKey, error) {
	vk := groth16.NewVerifyingKey(ecc.BN254)
	if err := readFile(path, "verifying key", vkLimit, Options{}, checkVKLayout(), vk.ReadFrom); err != nil {
		return nil, err
	}
	return vk, nil
}

// VerifyFiles checks a gnark binary proof against a binary public witness
// with gnark's own groth16.Verify, for a circuit whose commitments (if any)
// hash with gnark's default hash-to-field.
func VerifyFiles(vk groth16.VerifyingKey, proofPath, publicPath string) error {
	return VerifyFilesWith(vk, HashDefault, proofPath, publicPath)
}

// VerifyFilesWith is VerifyFiles for a circuit whose commitments hash with h
// (its directory's ReadHashToField).
func VerifyFilesWith(vk groth16.VerifyingKey, h HashToField, proofPath, publicPath string) error {
	_, _, err := verifyFiles(context.Background(), vk, h, proofPath, publicPath)
	return err
}

// verifyFiles reads a proof and its public witness, each bounded by what it
// can be under vk (a proof is a few hundred bytes, more with commitments; a
// public witness 12 bytes and 32 an input), checks them with groth16.Verify
// with h's hash-to-field and returns the proof and the public witness. A FIFO nobody writes to, or a stalled
// mount, fails at ctx's end or boundedread's default deadline.
func verifyFiles(ctx context.Context, vk groth16.VerifyingKey, h HashToField, proofPath, publicPath string) (groth16.Proof, witness.Witness, error) {
	proofData, err := readLimited(ctx, proofPath, 1<<16)
	if err != nil {
		return nil, nil, err
	}
	proof := groth16.NewProof(ecc.BN254)
	if err := checkProofLayout(proofData); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", proofPath, err)
	}
	if _, err := proof.ReadFrom(bytes.NewReader(proofData)); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", proofPath, err)
	}
	data, err := readLimited(ctx, publicPath, 12+32*int64(vk.NbPublicWitness()))
	if err != nil {
		return nil, nil, err
	}
	pub, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		return nil, nil, err
	}
	if err := pub.UnmarshalBinary(data); err != nil {
		return nil, nil, fmt.Errorf("public witness %s: %w", publicPath, err)
	}
	if err := groth16.Verify(proof, vk, pub, h.VerifierOption()); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", proofPath, err)
	}
	return proof, pub, nil
}

// readLimited reads the file at path, refusing one longer than limit bytes
// (unread, when its size says so).
func readLimited(ctx context.Context, path string, limit int64) ([]byte, error) {
	return boundedread.ReadAll(ctx, path, limit, boundedread.Options{})
}

// ParseVerifyingKey reads a gnark verifying key (circuit.vk) held in memory.
func ParseVerifyingKey(data []byte) (*groth16bn254.VerifyingKey, error) {
	vk := new(groth16bn254.VerifyingKey)
	if err := checkVKLayout()(bytes.NewReader(data), int64(len(data))); err != nil {
		return nil, err
	}
	if _, err := vk.ReadFrom(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return vk, nil
}

// VerifyProof checks a gnark binary proof against a binary public witness,
// both in memory (named for errors), with gnark's groth16.Verify, and
// returns the proof and the public inputs in decimal.
func VerifyProof(vk *groth16bn254.VerifyingKey, proofName string, proofData []byte, publicName string, publicData []byte) (*groth16bn254.Proof, []string, error) {
	return VerifyProofWith(vk, HashDefault, proofName, proofData, publicName, publicData)
}

// VerifyProofWith is VerifyProof for a circuit whose commitments hash with h.
func VerifyProofWith(vk *groth16bn254.VerifyingKey, h HashToField, proofName string, proofData []byte, publicName string, publicData []byte) (*groth16bn254.Proof, []string, error) {
	if limit := 12 + 32*int64(vk.NbPublicWitness()); int64(len(publicData)) > limit {
		return nil, nil, fmt.Errorf("public witness %s: %d bytes, more than the %d its key's inputs can be", publicName, len(publicData), limit)
	}
	proof := new(groth16bn254.Proof)
	if err := checkProofLayout(proofData); err != nil {
		return nil, nil, fmt.Errorf("proof %s: %w", proofName, err)
	}
	if _, err := proof.ReadFrom(bytes.NewReader(proofData)); err != nil {
		return nil, nil, fmt.Errorf("proof %s: %w", proofName, err)
	}
	pub, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		return nil, nil, err
	}
	if err := pub.UnmarshalBinary(publicData); err != nil {
		return nil, nil, fmt.Errorf("public witness %s: %w", publicName, err)
	}
	vec, ok := pub.Vector().(fr.Vector)
	if !ok {
		return nil, nil, fmt.Errorf("public witness %s: not a BN254 witness", publicName)
	}
	if err := groth16bn254.Verify(proof, vk, vec, h.VerifierOption()); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", proofName, err)
	}
	inputs := make([]string, 0, len(vec))
	for _, v := range vec {
		inputs = append(inputs, decimal(&v))
	}
	return proof, inputs, nil
}
