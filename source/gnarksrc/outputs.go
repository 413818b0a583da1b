package gnarksrc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/stages"
)

// A job's outputs, as Emit writes them and a Verifier reads them: the one
// place gnarksrc spells them. ID.proof is gnark's binary proof (written
// last: its presence marks the job done), ID.public the binary public
// witness, ID.proof.json the proof in decimal (snarkjs's layout), and
// ID.calldata, where the circuit's proofs have it (Options.Calldata), the
// Solidity verifier's calldata.
const (
	proofSuffix    = ".proof"
	publicSuffix   = ".public"
	jsonSuffix     = ".proof.json"
	calldataSuffix = ".calldata"
)

// OutputSuffixes are what end a gnark job's outputs' names, after its ID.
var OutputSuffixes = []string{proofSuffix, publicSuffix, jsonSuffix, calldataSuffix}

// maxProofBytes bounds a stored proof: gnark's binary proof is its three
// points and a commitment's two a commitment (a few hundred bytes).
const maxProofBytes = 1 << 16

// calldataMode says when a Verifier makes a job's calldata again.
type calldataMode int

const (
	calldataNone     calldataMode = iota // never: the circuit's proofs have none
	calldataAlways                       // always: they do (Options.Calldata)
	calldataAsStored                     // where the job stored one (a fleet's results)
)

// Verifier checks a gnark circuit's stored outputs against its verifying
// key (stages.Verifier). Check re-verifies the binary proof with gnark's
// groth16.Verify, requires ID.proof.json to be that very proof's JSON (a
// job stores it; another job's or a damaged one is not this job's proof),
// and makes the calldata again from the proof rather than trusting a stored
// one.
type Verifier struct {
	vk       groth16.VerifyingKey
	htf      HashToField
	calldata calldataMode
}

// NewVerifier checks proofs against vk, whose commitments hash with htf.
// storedCalldata: the job's calldata is made again where the job stored one
// (the fleet's results, which do not know how its worker ran); else never.
func NewVerifier(vk groth16.VerifyingKey, htf HashToField, storedCalldata bool) *Verifier {
	v := &Verifier{vk: vk, htf: htf}
	if storedCalldata {
		v.calldata = calldataAsStored
	}
	return v
}

// Verifier is the circuit's (stages.Source): its key, its hash-to-field,
// and calldata where the circuit's proofs have it.
func (s *Source) Verifier() stages.Verifier {
	v := &Verifier{vk: s.vk, htf: s.opts.HashToField}
	if s.opts.Calldata {
		v.calldata = calldataAlways
	}
	return v
}

// NbPublic is the key's public witness's values (gnark's
// NbPublicWitness: the commitments' included).
func (v *Verifier) NbPublic() int { return v.vk.NbPublicWitness() }

// Outputs names job id's outputs.
func (v *Verifier) Outputs(id string) stages.Outputs {
	return v.named(id, id+proofSuffix)
}

// Beside names the outputs of the proof stored as proof: its public
// witness is proof less .proof, plus .public (p.proof's p.public).
func (v *Verifier) Beside(proof string) stages.Outputs {
	return v.named(strings.TrimSuffix(proof, proofSuffix), proof)
}

// named lists every output a gnark job may have, its calldata included:
// Check makes the calldata only where the verifier makes calldata.
func (v *Verifier) named(id, proof string) stages.Outputs {
	return stages.Outputs{Proof: proof, Public: id + publicSuffix, Made: []stages.Made{
		{Name: id + jsonSuffix, Kept: true},
		{Name: id + calldataSuffix, Calldata: true},
	}}
}

// Check verifies o's proof and public witness from r (stages.Verifier),
// then makes o's others again from the proof: its JSON, and its calldata
// where the verifier makes calldata.
func (v *Verifier) Check(ctx context.Context, r blob.Reader, o stages.Outputs) (stages.Verified, error) {
	proof, pub, inputs, data, err := v.read(ctx, r, o)
	if err != nil {
		return stages.Verified{}, err
	}
	if err := verifyProof(v.vk, v.htf, r.Where(o.Proof), proof, pub); err != nil {
		return stages.Verified{}, err
	}
	got := stages.Verified{Outputs: o, Proof: data[0], Public: data[1], PublicInputs: inputs}
	got.Made = nil
	for _, m := range o.Made {
		if m.Calldata {
			if v.calldata == calldataNone {
				continue
			}
			if v.calldata == calldataAsStored {
				if _, err := r.Read(ctx, m.Name, maxCalldataBytes); errors.Is(err, fs.ErrNotExist) {
					continue // the job stored none
				}
			}
			if m.Data, err = calldataHex(proof, pub); err != nil {
				return stages.Verified{}, fmt.Errorf("%s: %w", r.Where(o.Proof), err)
			}
		} else { // the proof's JSON
			pj, err := ProofJSON(proof)
			if err != nil {
				return stages.Verified{}, err
			}
			if m.Data, err = json.Marshal(pj); err != nil {
				return stages.Verified{}, err
			}
		}
		got.Made = append(got.Made, m)
	}
	return got, nil
}

// read reads and decodes o's proof and public witness from r, each bounded
// by what it can be under v's key (a proof a few hundred bytes, more with
// commitments; a public witness 12 bytes and 32 an input), without
// verifying them: the proof, the public witness, its inputs in decimal, and
// the two blobs as read. An error wraps fs.ErrNotExist when r holds no
// proof.
func (v *Verifier) read(ctx context.Context, r blob.Reader, o stages.Outputs) (groth16.Proof, witness.Witness, []string, [2][]byte, error) {
	var data [2][]byte
	proofData, err := r.Read(ctx, o.Proof, maxProofBytes)
	if err != nil {
		return nil, nil, nil, data, err
	}
	proof, err := decodeProof(v.vk, r.Where(o.Proof), proofData)
	if err != nil {
		return nil, nil, nil, data, err
	}
	id, err := proofCurve(v.vk)
	if err != nil {
		return nil, nil, nil, data, err
	}
	nbPublic, err := NbPublicInputs(v.vk)
	if err != nil {
		return nil, nil, nil, data, err
	}
	publicData, err := r.Read(ctx, o.Public, publicWitnessSize(nbPublic))
	if err != nil {
		return nil, nil, nil, data, err
	}
	pub, err := parsePublicWitness(id, nbPublic, publicData)
	if err != nil {
		return nil, nil, nil, data, fmt.Errorf("public witness %s: %w", r.Where(o.Public), err)
	}
	inputs, err := publicDecimals(pub)
	if err != nil {
		return nil, nil, nil, data, fmt.Errorf("public witness %s: %w", r.Where(o.Public), err)
	}
	data[0], data[1] = proofData, publicData
	return proof, pub, inputs, data, nil
}

// maxCalldataBytes bounds a stored calldata read only to see it is there.
const maxCalldataBytes = 64 << 20

// dropNotExist is err without its fs.ErrNotExist: a job whose proof is
// there but not another of its outputs is no job that left nothing (a
// Verifier's fs.ErrNotExist), but one whose outputs are incomplete.
func dropNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("missing")
	}
	return err
}

// SerialSynthesis is false: gnark's solver spreads a job over cores
// (stages.Source).
func (s *Source) SerialSynthesis() bool { return false }

// Close releases nothing: a gnark circuit holds only memory (stages.Source).
func (s *Source) Close(context.Context) error { return nil }
