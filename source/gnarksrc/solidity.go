package gnarksrc

import (
	"fmt"
	"io"
	"path/filepath"

	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/zkpipe/zkpipe/evm"
)

// ExportSolidity writes gnark's Solidity verifier for the circuit directory
// dir: its circuit.vk, hashing a commitment as the directory's hash-to-field
// says. A circuit with a commitment proved with gnark's default hash is
// refused, naming the fix: the EVM has no RFC 9380 hash_to_field, so the
// contract would reject every proof.
func ExportSolidity(dir string, w io.Writer) error {
	vkI, err := ReadVerifyingKey(filepath.Join(dir, VKFile))
	if err != nil {
		return err
	}
	vk := vkI.(*groth16bn254.VerifyingKey)
	htf, err := ReadHashToField(dir)
	if err != nil {
		return err
	}
	var h evm.Hash
	switch htf {
	case HashSHA256:
		h = evm.SHA256
	case HashKeccak256:
		h = evm.Keccak256
	default:
		if len(vk.PublicAndCommitmentCommitted) > 0 {
			return fmt.Errorf("circuit %s has a commitment and its proofs hash it with gnark's default hash-to-field, which a Solidity verifier cannot compute: "+
				"record sha256 (echo sha256 > %s, or zkpipe setup --hash-to-field sha256) and prove again", dir, filepath.Join(dir, HashFile))
		}
	}
	if err := evm.ExportSolidity(w, vk, h); err != nil {
		return fmt.Errorf("circuit %s: %w", dir, err)
	}
	return nil
}
