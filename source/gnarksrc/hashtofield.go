package gnarksrc

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/consensys/gnark/backend"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"golang.org/x/crypto/sha3"
)

// HashFile names the circuit directory's hash-to-field, one word ("sha256",
// "keccak256" or "default"); a directory without it uses gnark's default.
// It is a file of its own, not a field of circuit.json, because a user's
// circuit directory has no circuit.json (that one names a built-in).
const HashFile = "hash-to-field"

// HashToField is how a BSB22 commitment becomes its challenge wire: the
// prover (in the commitment hint) and every verifier must hash alike, or a
// circuit with a commitment gets proofs that fail ("pairing doesn't match").
// It changes nothing for a circuit without commitments, nor its keys: the
// choice can be made or changed after setup.
type HashToField string

const (
	// HashDefault is gnark's default: RFC 9380 hash_to_field (expand_msg_xmd
	// over SHA-256) with the domain constraint.CommitmentDst.
	HashDefault HashToField = "default"
	// HashSHA256 is plain SHA-256 of the serialised commitment and public
	// inputs, reduced mod r: what gnark's Solidity verifier computes with
	// solidity.WithHashToFieldFunction(sha256.New()).
	HashSHA256 HashToField = "sha256"
	// HashKeccak256 is legacy Keccak-256, reduced mod r: the Solidity
	// verifier's own default (solidity.WithProverTargetSolidityVerifier).
	HashKeccak256 HashToField = "keccak256"
)

// ParseHashToField reads a hash-to-field name; "" is the default.
func ParseHashToField(s string) (HashToField, error) {
	switch h := HashToField(strings.TrimSpace(s)); h {
	case "", HashDefault:
		return HashDefault, nil
	case HashSHA256, HashKeccak256:
		return h, nil
	}
	return "", fmt.Errorf("hash-to-field %q: want %s, %s or %s", strings.TrimSpace(s), HashDefault, HashSHA256, HashKeccak256)
}

// hashOn returns a fresh hash of this kind over id's scalar field (gnark's
// default hashes to the curve's own Fr); each use needs its own (gnark's
// resets it between commitments, so one is never shared between jobs).
func (h HashToField) hashOn(id curve.ID) hash.Hash {
	switch h {
	case HashSHA256:
		return sha256.New()
	case HashKeccak256:
		return sha3.NewLegacyKeccak256()
	}
	return gnarkCurves[id].defaultHash()
}

// fresh is a fresh hash for gnark's options; nil for the default, which
// gnark's prover and verifier then make over the proof's own curve.
func (h HashToField) fresh() hash.Hash {
	if h == HashSHA256 || h == HashKeccak256 {
		return h.hashOn(0)
	}
	return nil
}

// VerifierOption is the option gnark's groth16.Verify needs to check proofs
// made with h, on any curve.
func (h HashToField) VerifierOption() backend.VerifierOption {
	return backend.WithVerifierHashToFieldFunction(h.fresh())
}

// ProverOption is the option gnark's groth16.Prove needs to prove as zkpipe
// does with h, on any curve.
func (h HashToField) ProverOption() backend.ProverOption {
	return backend.WithProverHashToFieldFunction(h.fresh())
}

// ReadHashToField reads dir's hash-to-field file (gnark's default when the
// directory has none).
func ReadHashToField(dir string) (HashToField, error) {
	p := filepath.Join(dir, HashFile)
	b, err := boundedread.ReadLimited(context.Background(), p, HashFile, metaLimit, Options{}.load(), io.ReadAll)
	if errors.Is(err, os.ErrNotExist) {
		return HashDefault, nil
	}
	if err != nil {
		return "", err
	}
	h, err := ParseHashToField(string(b))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return h, nil
}

// WriteHashToField records h in dir (atomically).
func WriteHashToField(dir string, h HashToField) error {
	if _, err := ParseHashToField(string(h)); err != nil {
		return err
	}
	_, err := blob.Dir(dir).Write(HashFile, []byte(string(h)+"\n"))
	return err
}
