package gnarksrc

import (
	"fmt"
	"os"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
)

// ReadVerifyingKey reads a gnark verifying key file.
func ReadVerifyingKey(path string) (groth16.VerifyingKey, error) {
	vk := groth16.NewVerifyingKey(ecc.BN254)
	if err := readFile(path, vk.ReadFrom); err != nil {
		return nil, err
	}
	return vk, nil
}

// VerifyFiles checks a gnark binary proof against a binary public witness
// with gnark's own groth16.Verify.
func VerifyFiles(vk groth16.VerifyingKey, proofPath, publicPath string) error {
	proof := groth16.NewProof(ecc.BN254)
	if err := readFile(proofPath, proof.ReadFrom); err != nil {
		return err
	}
	data, err := os.ReadFile(publicPath)
	if err != nil {
		return err
	}
	pub, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		return err
	}
	if err := pub.UnmarshalBinary(data); err != nil {
		return fmt.Errorf("public witness %s: %w", publicPath, err)
	}
	return groth16.Verify(proof, vk, pub)
}
