package gnarksrc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/stages"
)

// Done reports the outputs a finished job id left in dir (ID.proof,
// ID.public and ID.proof.json, as Emit writes them), after checking the
// proof and public witness with gnark's groth16.Verify against the
// circuit's verifying key and that ID.proof.json is that proof's JSON. It
// returns an error wrapping fs.ErrNotExist when the job left no proof, and
// another error when its files exist but do not make its valid proof
// (a proof.json missing among them included).
func (s *Source) Done(dir, id string) (stages.Emitted, error) {
	em := stages.Emitted{Proof: filepath.Join(dir, id+".proof"), Public: filepath.Join(dir, id+".public")}
	if _, err := os.Stat(em.Proof); err != nil {
		return stages.Emitted{}, err
	}
	proof, pub, err := verifyFiles(context.Background(), s.vk, s.opts.HashToField, em.Proof, em.Public)
	if err != nil {
		return stages.Emitted{}, err
	}
	// ID.proof.json is an output of the job too: it must hold this very
	// proof, as Emit writes it (another job's, or a damaged one, would be
	// answered as this job's)
	pj, err := ProofJSON(proof)
	if err != nil {
		return stages.Emitted{}, err
	}
	want, err := json.Marshal(pj)
	if err != nil {
		return stages.Emitted{}, err
	}
	jsonPath := filepath.Join(dir, id+".proof.json")
	got, err := boundedread.ReadAll(context.Background(), jsonPath, int64(len(want)), boundedread.Options{})
	if err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", jsonPath, dropNotExist(err))
	}
	if !bytes.Equal(got, want) {
		return stages.Emitted{}, fmt.Errorf("%s does not hold %s's proof", jsonPath, em.Proof)
	}
	if s.opts.Calldata {
		cd, err := calldataHex(proof, pub)
		if err != nil {
			return stages.Emitted{}, fmt.Errorf("%s: %w", em.Proof, err)
		}
		if em.Calldata, err = blob.Dir(dir).Write(id+".calldata", cd); err != nil {
			return stages.Emitted{}, err
		}
	}
	if em.PublicInputs, err = publicDecimals(pub); err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", em.Public, err)
	}
	return em, nil
}

// dropNotExist is err without its fs.ErrNotExist: a job whose proof is
// there but not its proof.json is no job that left nothing (Done's
// fs.ErrNotExist), but one whose outputs are incomplete.
func dropNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("missing")
	}
	return err
}
