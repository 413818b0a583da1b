package circomsrc

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/stages"
)

// A job's outputs, as Emit writes them and a Verifier reads them: the one
// place circomsrc spells them. ID.proof.json and ID.public.json are
// snarkjs's proof.json and public.json (the proof written last: its
// presence marks the job done).
const (
	proofSuffix  = ".proof.json"
	publicSuffix = ".public.json"
)

// OutputSuffixes are what end a circom job's outputs' names, after its ID.
var OutputSuffixes = []string{proofSuffix, publicSuffix}

// Verifier checks a circom circuit's stored outputs against its verifying
// key (stages.Verifier), as snarkjs groth16 verify does.
type Verifier struct{ vk *VerifyingKey }

// NewVerifier checks proofs against vk.
func NewVerifier(vk *VerifyingKey) *Verifier { return &Verifier{vk: vk} }

// Verifier is the circuit's (stages.Source): the zkey's verifying key.
func (s *Source) Verifier() stages.Verifier { return NewVerifier(s.vk) }

// NbPublic is the key's nPublic.
func (v *Verifier) NbPublic() int { return v.vk.NPublic }

// Outputs names job id's outputs.
func (v *Verifier) Outputs(id string) stages.Outputs {
	return stages.Outputs{Proof: id + proofSuffix, Public: id + publicSuffix}
}

// Beside names the outputs of the proof stored as proof: its public inputs
// are proof less .proof.json, plus .public.json.
func (v *Verifier) Beside(proof string) stages.Outputs {
	return stages.Outputs{Proof: proof, Public: strings.TrimSuffix(proof, proofSuffix) + publicSuffix}
}

// Check reads o's proof.json and public.json from r, each bounded by what
// it can be, and verifies them with the key (stages.Verifier). A circom
// job makes no other outputs.
func (v *Verifier) Check(ctx context.Context, r blob.Reader, o stages.Outputs) (stages.Verified, error) {
	proof, err := r.Read(ctx, o.Proof, proofJSONLimit)
	if err != nil {
		return stages.Verified{}, fmt.Errorf("proof: %w", err)
	}
	public, err := r.Read(ctx, o.Public, publicJSONLimit(v.vk.NPublic))
	if err != nil {
		return stages.Verified{}, fmt.Errorf("public inputs: %w", err)
	}
	inputs, err := v.vk.VerifyJSON(r.Where(o.Proof), proof, r.Where(o.Public), public)
	if err != nil {
		return stages.Verified{}, err
	}
	return stages.Verified{Outputs: o, Proof: proof, Public: public, PublicInputs: inputs}, nil
}
