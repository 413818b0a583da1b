package gnarksrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// ReadVerifyingKey reads a gnark verifying key file of any curve of
// package curve: nothing in the file names it, so the curve is the one
// whose encoding the file's layout fits (its points' sizes differ: 32 and
// 64 bytes compressed for BN254, 48 and 96 for BLS12-381), and gnark's
// decoder of that curve then checks every point. A file that fits no
// curve gets BN254's layout error and what each other curve's layout makes
// of it.
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
// (checkVKLayout); when none does, BN254 with an error that says what is
// wrong with it as each curve's key (a damaged BLS12-381 key is not told
// only what BN254's layout makes of it), wrapping the first curve's.
func vkCurve(r io.ReaderAt, size int64) (curve.ID, error) {
	var first error
	var each []string
	for _, id := range curve.All {
		err := checkVKLayout(id, nil)(r, size)
		if err == nil {
			return id, nil
		}
		if first == nil {
			first = err
		}
		each = append(each, fmt.Sprintf("as a %s key: %v", strings.ToUpper(id.String()), err))
	}
	if len(each) < 2 {
		return curve.BN254, first
	}
	return curve.BN254, fmt.Errorf("no curve's verifying key: as a %s key: %w; %s", strings.ToUpper(curve.All[0].String()), first, strings.Join(each[1:], "; "))
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
// (its directory's ReadHashToField): a Verifier's Check of the two files.
// A proof of a circuit with commitments that fails under h is checked under
// the other hash-to-field functions too, and the error (wrapping
// ErrHashToField) says which one the check used, that a proof made under
// another does not verify with it, and which other, if any, it verifies
// under: a proof made before the circuit's hash-to-field changed fails with
// "pairing doesn't match" alone otherwise.
func VerifyFilesWith(vk groth16.VerifyingKey, h HashToField, proofPath, publicPath string) error {
	_, err := NewVerifier(vk, h, false).Check(context.Background(), blob.DirReader(""), stages.Outputs{Proof: proofPath, Public: publicPath})
	return err
}

// verifyProof checks proof against the public witness pub with gnark's
// groth16.Verify and h's hash-to-field (the error as VerifyFilesWith says).
func verifyProof(vk groth16.VerifyingKey, h HashToField, proofName string, proof groth16.Proof, pub witness.Witness) error {
	err := groth16.Verify(proof, vk, pub, h.VerifierOption())
	if err == nil {
		return nil
	}
	if n, nerr := NbCommitments(vk); nerr != nil || n == 0 {
		return fmt.Errorf("%s: %w", proofName, err)
	}
	var under []string
	for _, other := range []HashToField{HashDefault, HashSHA256, HashKeccak256} {
		if other != h && groth16.Verify(proof, vk, pub, other.VerifierOption()) == nil {
			under = append(under, string(other))
		}
	}
	why := "nor under " + otherHashes(h)
	if len(under) > 0 {
		why = fmt.Sprintf("it verifies under %s: it was made under that hash-to-field (before the circuit's changed?); check it under that one (gnarksrc.Options.HashToField %s)", strings.Join(under, " and "), under[0])
	}
	return fmt.Errorf("%s: %w: checked with hash-to-field %s, and a proof made under another hash-to-field does not verify with it; %s (%w)", proofName, err, h, why, ErrHashToField)
}

// ErrHashToField marks a proof of a circuit with commitments that failed
// under the hash-to-field it was checked with (VerifyFilesWith).
var ErrHashToField = errors.New("the circuit's commitments hash to their challenges with a hash-to-field the proof may not have been made with")

// otherHashes names the hash-to-field functions other than h.
func otherHashes(h HashToField) string {
	var o []string
	for _, x := range []HashToField{HashDefault, HashSHA256, HashKeccak256} {
		if x != h {
			o = append(o, string(x))
		}
	}
	return strings.Join(o, " or ")
}

// verifyFiles reads a proof and its public witness, each bounded by what it
// can be under vk (a proof is a few hundred bytes, more with commitments; a
// public witness 12 bytes and 32 an input), checks them with groth16.Verify
// with h's hash-to-field and returns the proof and the public witness. A
// FIFO nobody writes to, or a stalled mount, fails at ctx's end or
// boundedread's default deadline.
func verifyFiles(ctx context.Context, vk groth16.VerifyingKey, h HashToField, proofPath, publicPath string) (groth16.Proof, witness.Witness, error) {
	r := blob.DirReader("")
	proof, pub, _, _, err := NewVerifier(vk, h, false).read(ctx, r, stages.Outputs{Proof: proofPath, Public: publicPath})
	if err != nil {
		return nil, nil, err
	}
	if err := verifyProof(vk, h, proofPath, proof, pub); err != nil {
		return nil, nil, err
	}
	return proof, pub, nil
}

// decodeProof decodes a stored gnark binary proof for vk, checking its
// layout first. A proof of the other curve says so rather than
// "truncated" or "invalid compressed coordinate": the points' sizes
// usually tell the curves apart, but each point's first byte says whether
// it is compressed, so a proof of one curve can happen to have a layout of
// the other's and fail only as it decodes; it is named by the curve it
// both fits and decodes as.
func decodeProof(vk groth16.VerifyingKey, name string, data []byte) (groth16.Proof, error) {
	id, err := proofCurve(vk)
	if err != nil {
		return nil, err
	}
	nbPublic, err := NbPublicInputs(vk)
	if err != nil {
		return nil, err
	}
	err = checkProofLayout(data, id, vk.NbPublicWitness()-nbPublic)
	if err == nil {
		proof := groth16.NewProof(id.ECC())
		_, rerr := proof.ReadFrom(bytes.NewReader(data))
		if rerr == nil {
			return proof, nil
		}
		err = fmt.Errorf("read %s: %w", name, rerr)
	} else {
		err = fmt.Errorf("%s: %w", name, err)
	}
	for _, other := range curve.All {
		if other == id || checkProofLayout(data, other, -1) != nil {
			continue
		}
		if _, rerr := groth16.NewProof(other.ECC()).ReadFrom(bytes.NewReader(data)); rerr == nil {
			return nil, fmt.Errorf("%s: a %s proof for a %s circuit", name, strings.ToUpper(other.String()), strings.ToUpper(id.String()))
		}
	}
	return nil, err
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
	proof, pub, inputs, _, err := NewVerifier(vk, h, false).read(context.Background(), blob.Files{proofName: proofData, publicName: publicData}, stages.Outputs{Proof: proofName, Public: publicName})
	if err != nil {
		return nil, nil, err
	}
	if err := verifyProof(vk, h, proofName, proof, pub); err != nil {
		return nil, nil, err
	}
	return proof, inputs, nil
}

// publicWitnessSize is the size of a public witness of nbPublic inputs:
// its 12-byte header and a value each.
func publicWitnessSize(nbPublic int) int64 {
	return witnessHeader + proofdata.ScalarBytes*int64(nbPublic)
}

// parsePublicWitness decodes data as the public witness of a circuit of
// curve id with nbPublic public inputs (NbPublicInputs: the commitments'
// values, which gnark's NbPublicWitness counts, are no input): exactly its
// header, which must say nbPublic public values and no secret one, and
// those values, nothing after. gnark's decoder stops after the values its
// header counts and takes whatever follows.
func parsePublicWitness(id curve.ID, nbPublic int, data []byte) (witness.Witness, error) {
	if want := publicWitnessSize(nbPublic); int64(len(data)) != want {
		if int64(len(data)) > want {
			return nil, fmt.Errorf("%d bytes, the %d public inputs of its key take %d: trailing bytes after them", len(data), nbPublic, want)
		}
		return nil, fmt.Errorf("%d bytes, the %d public inputs of its key take %d: truncated", len(data), nbPublic, want)
	}
	nbPub, nbSecret, nbElems := binary.BigEndian.Uint32(data[0:4]), binary.BigEndian.Uint32(data[4:8]), binary.BigEndian.Uint32(data[8:12])
	if uint64(nbPub) != uint64(nbPublic) || nbSecret != 0 || nbElems != nbPub {
		return nil, fmt.Errorf("its header does not give the %d public values and no secret one of a public witness of its key", nbPublic)
	}
	pub, err := witness.New(id.ECC().ScalarField())
	if err != nil {
		return nil, err
	}
	if err := pub.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return pub, nil
}
