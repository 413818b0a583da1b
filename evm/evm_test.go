package evm_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/evm"
)

// commits makes Commits separate BSB22 commitments (one per api.Commit).
type commits struct {
	X       [2]frontend.Variable
	Y       frontend.Variable `gnark:",public"`
	Commits int               `gnark:"-"`
}

func (c *commits) Define(api frontend.API) error {
	for i := 0; i < c.Commits; i++ {
		g, err := api.(frontend.Committer).Commit(c.X[i])
		if err != nil {
			return err
		}
		api.AssertIsDifferent(g, 0)
	}
	api.AssertIsEqual(api.Mul(c.X[0], c.X[1]), c.Y)
	return nil
}

func vkOf(t *testing.T, nCommits int) *groth16bn254.VerifyingKey {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &commits{Commits: nCommits})
	if err != nil {
		t.Fatal(err)
	}
	_, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	v := vk.(*groth16bn254.VerifyingKey)
	if len(v.PublicAndCommitmentCommitted) != nCommits {
		t.Fatalf("%d commitments, want %d", len(v.PublicAndCommitmentCommitted), nCommits)
	}
	return v
}

// TestExportSolidityRefuses what gnark's contract cannot verify: two
// commitments, a commitment with no EVM hash named, a hash the EVM lacks.
func TestExportSolidityRefuses(t *testing.T) {
	for _, c := range []struct {
		commits int
		hash    evm.Hash
		want    string // "" for a contract
	}{
		{0, "", ""},
		{0, evm.SHA256, ""},
		{1, evm.SHA256, ""},
		{1, evm.Keccak256, ""},
		{1, "", "name the hash-to-field"},
		{1, "blake2s", "computes only"},
		{2, evm.SHA256, "at most one"},
	} {
		var buf bytes.Buffer
		err := evm.ExportSolidity(&buf, vkOf(t, c.commits), c.hash)
		switch {
		case c.want == "" && (err != nil || !strings.Contains(buf.String(), "contract Verifier")):
			t.Errorf("%d commitments, %q: %v", c.commits, c.hash, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || buf.Len() > 0):
			t.Errorf("%d commitments, %q: %v (%d bytes written), want %q", c.commits, c.hash, err, buf.Len(), c.want)
		}
	}
}
