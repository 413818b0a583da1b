package gnarksrc

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/evm"
)

// Solidity verifiers pair on Ethereum's BN254 precompiles (EIP-196/197), so
// export and calldata are BN254's alone: a BLS12-381 circuit gets an error
// naming its curve.

// calldataHex is the proof's call of its Solidity verifier (evm.CalldataHex).
func calldataHex(proof groth16.Proof, public witness.Witness) ([]byte, error) {
	p, ok := proof.(*groth16bn254.Proof)
	vec, ok2 := public.Vector().(fr.Vector)
	if !ok || !ok2 {
		id, _ := curve.FromECC(proof.CurveID())
		return nil, fmt.Errorf("calldata: Solidity verifiers are BN254's (Ethereum's precompiles), this proof is %s", id)
	}
	return evm.CalldataHex(p, vec), nil
}

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
	vk, ok := vkI.(*groth16bn254.VerifyingKey)
	if !ok {
		id, _ := curve.FromECC(vkI.CurveID())
		return fmt.Errorf("circuit %s is %s: a Solidity verifier needs a BN254 circuit (Ethereum's pairing precompiles)", dir, id)
	}
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
			return defaultHashRefused(dir, filepath.Join(dir, HashFile), "")
		}
	}
	if err := evm.ExportSolidity(w, vk, h); err != nil {
		return fmt.Errorf("circuit %s: %w", dir, err)
	}
	return nil
}

// defaultHashRefused is the error for Solidity output (a contract; with
// what, proofs' calldata) of circuit name, which has a commitment and
// whose proofs hash it with gnark's default hash-to-field: the EVM has no
// RFC 9380 hash_to_field, so every contract would reject them. file is
// where sha256 is recorded.
func defaultHashRefused(name, file, what string) error {
	if what != "" {
		what = ": " + what
	}
	return fmt.Errorf("circuit %s has a commitment and its proofs hash it with gnark's default hash-to-field, which a Solidity verifier cannot compute%s; "+
		"record sha256 (echo sha256 > %s, or zkpipe setup --hash-to-field sha256) and prove again", name, what, file)
}
