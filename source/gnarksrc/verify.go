package gnarksrc

import (
	"bytes"
	"context"
	"fmt"

	"io"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/boundedread"
)

// ReadVerifyingKey reads a gnark verifying key file of any curve of
// package curve: nothing in the file names it, so the curve is the one
// whose encoding the file's layout fits (its points' sizes differ: 32 and
// 64 bytes compressed for BN254, 48 and 96 for BLS12-381), and gnark's
// decoder of that curve then checks every point. A file that fits no
// curve gets BN254's layout error.
func ReadVerifyingKey(path string) (groth16.VerifyingKey, error) {
	var vk groth16.VerifyingKey
	check := func(r io.ReaderAt, size int64) error {
		id, err := vkCurve(r, size)
		vk = groth16.NewVerifyingKey(id.ECC())
		return err
	}
	read := func(r io.Reader) (int64, error) { return vk.ReadFrom(r) }
	if err := readFile(path, "verifying key", vkLimit, Options{}, check, read); err != nil {
		return nil, err
	}
	return vk, nil
}

// vkCurve is the curve whose verifying-key layout the file in r fits
// (checkVKLayout); BN254 with its error when none does.
func vkCurve(r io.ReaderAt, size int64) (curve.ID, error) {
	var first error
	for _, id := range curve.All {
		err := checkVKLayout(id)(r, size)
		if err == nil {
			return id, nil
		}
		if first == nil {
			first = err
		}
	}
	return curve.BN254, first
}

// proofCurve is vk's curve, for reading a proof and its public witness.
func proofCurve(vk groth16.VerifyingKey) (curve.ID, error) {
	return curve.FromECC(vk.CurveID())
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
	id, err := proofCurve(vk)
	if err != nil {
		return nil, nil, err
	}
	proof := groth16.NewProof(id.ECC())
	if err := checkProofLayout(proofData, id); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", proofPath, err)
	}
	if _, err := proof.ReadFrom(bytes.NewReader(proofData)); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", proofPath, err)
	}
	data, err := readLimited(ctx, publicPath, 12+proofdata.ScalarBytes*int64(vk.NbPublicWitness()))
	if err != nil {
		return nil, nil, err
	}
	pub, err := witness.New(id.ECC().ScalarField())
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

// ParseVerifyingKey reads a gnark verifying key (circuit.vk) held in
// memory, of any curve (see ReadVerifyingKey).
func ParseVerifyingKey(data []byte) (groth16.VerifyingKey, error) {
	id, err := vkCurve(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	vk := groth16.NewVerifyingKey(id.ECC())
	if _, err := vk.ReadFrom(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return vk, nil
}

// VerifyProof checks a gnark binary proof against a binary public witness,
// both in memory (named for errors), with gnark's groth16.Verify, and
// returns the proof and the public inputs in decimal. The proof is of vk's
// curve (*groth16bn254.Proof for BN254).
func VerifyProof(vk groth16.VerifyingKey, proofName string, proofData []byte, publicName string, publicData []byte) (groth16.Proof, []string, error) {
	return VerifyProofWith(vk, HashDefault, proofName, proofData, publicName, publicData)
}

// VerifyProofWith is VerifyProof for a circuit whose commitments hash with h.
func VerifyProofWith(vk groth16.VerifyingKey, h HashToField, proofName string, proofData []byte, publicName string, publicData []byte) (groth16.Proof, []string, error) {
	id, err := proofCurve(vk)
	if err != nil {
		return nil, nil, err
	}
	if limit := 12 + proofdata.ScalarBytes*int64(vk.NbPublicWitness()); int64(len(publicData)) > limit {
		return nil, nil, fmt.Errorf("public witness %s: %d bytes, more than the %d its key's inputs can be", publicName, len(publicData), limit)
	}
	proof := groth16.NewProof(id.ECC())
	if err := checkProofLayout(proofData, id); err != nil {
		return nil, nil, fmt.Errorf("proof %s: %w", proofName, err)
	}
	if _, err := proof.ReadFrom(bytes.NewReader(proofData)); err != nil {
		return nil, nil, fmt.Errorf("proof %s: %w", proofName, err)
	}
	pub, err := witness.New(id.ECC().ScalarField())
	if err != nil {
		return nil, nil, err
	}
	if err := pub.UnmarshalBinary(publicData); err != nil {
		return nil, nil, fmt.Errorf("public witness %s: %w", publicName, err)
	}
	if err := groth16.Verify(proof, vk, pub, h.VerifierOption()); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", proofName, err)
	}
	inputs, err := publicDecimals(pub)
	if err != nil {
		return nil, nil, fmt.Errorf("public witness %s: %w", publicName, err)
	}
	return proof, inputs, nil
}
