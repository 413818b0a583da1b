// Package evm puts gnark Groth16 proofs on an Ethereum chain: the verifier
// contract gnark generates for a verifying key (vk.ExportSolidity) and the
// calldata of one proof for that contract's verifyProof. It holds no EVM
// itself (evm/soltest runs the contracts in go-ethereum's), so that only
// the tests pay go-ethereum's compile time.
package evm

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/big"

	"crypto/sha256"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/solidity"
	"golang.org/x/crypto/sha3"
)

// Hash names the hash-to-field a gnark Solidity verifier can compute for a
// commitment's challenge: only these two exist as EVM opcodes/precompiles.
type Hash string

const (
	SHA256    Hash = "sha256"
	Keccak256 Hash = "keccak256"
)

// ExportSolidity writes gnark's verifier contract for vk. A key with a BSB22
// commitment needs the hash its proofs were made with (h, "" when it has
// none); a key with more than one commitment is refused, since gnark's
// contract supports at most one.
func ExportSolidity(w io.Writer, vk *groth16bn254.VerifyingKey, h Hash) error {
	n := len(vk.PublicAndCommitmentCommitted)
	if n > 1 {
		return fmt.Errorf("the verifying key has %d commitments; gnark's Solidity verifier supports at most one", n)
	}
	var opts []solidity.ExportOption
	switch h {
	case SHA256, Keccak256:
		opts = append(opts, solidity.WithHashToFieldFunction(newHash(h)))
	case "":
		if n == 1 {
			return fmt.Errorf("the verifying key has a commitment: name the hash-to-field its proofs use (sha256 or keccak256)")
		}
	default:
		return fmt.Errorf("hash-to-field %q: gnark's Solidity verifier computes only %s or %s", h, SHA256, Keccak256)
	}
	var buf bytes.Buffer // nothing half-written on an error
	if err := vk.ExportSolidity(&buf, opts...); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func newHash(h Hash) hash.Hash {
	if h == SHA256 {
		return sha256.New()
	}
	return sha3.NewLegacyKeccak256()
}

// Signature is the verifier's function for nbPublic public inputs (the
// public witness, less commitment wires):
// verifyProof(bytes proof, uint256[nbPublic] input), which reverts unless
// the proof verifies.
func Signature(nbPublic int) string { return fmt.Sprintf("verifyProof(bytes,uint256[%d])", nbPublic) }

// Calldata is the ABI-encoded call of the verifier's verifyProof for proof
// and its public inputs: the 4-byte selector, the head (the offset of the
// proof bytes, then the inputs inline, a static array) and the tail (the
// proof's length and its bytes, gnark's MarshalSolidity: A, B, C in EIP-197
// order, then the commitments and their proof of knowledge; a multiple of
// 32 bytes, so no padding).
func Calldata(proof *groth16bn254.Proof, public fr.Vector) []byte {
	p := proof.MarshalSolidity()
	sel := sha3.NewLegacyKeccak256()
	sel.Write([]byte(Signature(len(public))))
	out := sel.Sum(nil)[:4]
	word := func(x *big.Int) { out = append(out, x.FillBytes(make([]byte, 32))...) }
	word(big.NewInt(int64(32 * (1 + len(public)))))
	for i := range public {
		var v big.Int
		public[i].BigInt(&v)
		word(&v)
	}
	word(big.NewInt(int64(len(p))))
	out = append(out, p...)
	if r := len(p) % 32; r != 0 {
		out = append(out, make([]byte, 32-r)...)
	}
	return out
}

// CalldataHex is Calldata as 0x-prefixed hex, what eth_call, cast and
// ethers take, with a newline.
func CalldataHex(proof *groth16bn254.Proof, public fr.Vector) []byte {
	return []byte("0x" + hex.EncodeToString(Calldata(proof, public)) + "\n")
}
