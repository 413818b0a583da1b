package gnarksrc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/rangecheck"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// rangeChecked is a user's circuit whose std range check adds a BSB22
// commitment: the case the user hit.
type rangeChecked struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *rangeChecked) Define(api frontend.API) error {
	rangecheck.New(api).Check(c.X, 16)
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	return nil
}

// TestHashToFieldPerCircuit: the hash-to-field a circuit directory records
// is the one zkpipe proves with and every check uses: gnark's Verify with
// that hash accepts zkpipe's proof and with another rejects it; Done (the
// --skip-done check) and VerifyFilesWith (zkpipe verify) accept it; and a
// proof gnark's own Prove makes with that hash passes VerifyFilesWith too.
func TestHashToFieldPerCircuit(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "rc")
	wpath := filepath.Join(root, "rc.witness")
	vkI := writeCircuitDir(t, &rangeChecked{}, &rangeChecked{X: 1234, Y: 1234 * 1234}, dir, wpath)
	if len(vkI.(*groth16bn254.VerifyingKey).PublicAndCommitmentCommitted) != 1 {
		t.Fatal("the range check added no commitment: the test tests nothing")
	}
	full := readWitness(t, wpath)
	pub, err := full.Public()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []gnarksrc.HashToField{gnarksrc.HashDefault, gnarksrc.HashSHA256, gnarksrc.HashKeccak256} {
		t.Run(string(h), func(t *testing.T) {
			if h == gnarksrc.HashDefault {
				os.Remove(filepath.Join(dir, gnarksrc.HashFile)) // no file: gnark's default
			} else if err := gnarksrc.WriteHashToField(dir, h); err != nil {
				t.Fatal(err)
			}
			c, err := gnarksrc.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			src := c.Source.(*gnarksrc.Source)
			if src.HashToField() != h {
				t.Fatalf("loaded with %s, the directory says %s", src.HashToField(), h)
			}
			out := t.TempDir()
			res := provertest.Run(t, provertest.Config(out, 1, 1), []*stages.Circuit{c},
				[]*stages.Job{{Request: stream.Request{ID: "j", Witness: wpath}}}, time.Minute)
			if len(res) != 1 || res[0].Error != "" {
				t.Fatalf("results %+v", res)
			}
			proof := groth16.NewProof(ecc.BN254)
			b, err := os.ReadFile(res[0].Proof)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := proof.ReadFrom(bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, vkI, pub, h.VerifierOption()); err != nil {
				t.Errorf("gnark's Verify with %s rejects zkpipe's proof: %v", h, err)
			}
			for _, other := range []gnarksrc.HashToField{gnarksrc.HashDefault, gnarksrc.HashSHA256, gnarksrc.HashKeccak256} {
				if other != h && groth16.Verify(proof, vkI, pub, other.VerifierOption()) == nil {
					t.Errorf("gnark's Verify accepts a %s proof with %s", h, other)
				}
			}
			ver := src.Verifier()
			if _, err := ver.Check(t.Context(), blob.DirReader(out), ver.Outputs("j")); err != nil {
				t.Errorf("its Verifier (--skip-done) rejects the proof: %v", err)
			}
			if err := gnarksrc.VerifyFilesWith(vkI, h, res[0].Proof, res[0].Public); err != nil {
				t.Errorf("VerifyFilesWith %s: %v", h, err)
			}

			// a gnark user's own proof, with the same hash, passes zkpipe verify
			ccs := src.R1CS()
			pk, err := src.WholeProvingKey()
			if err != nil {
				t.Fatal(err)
			}
			gp, err := groth16.Prove(ccs, pk, full, h.ProverOption())
			if err != nil {
				t.Fatal(err)
			}
			gpath := filepath.Join(out, "gnark.proof")
			var buf bytes.Buffer
			gp.WriteTo(&buf)
			if err := os.WriteFile(gpath, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := gnarksrc.VerifyFilesWith(vkI, h, gpath, res[0].Public); err != nil {
				t.Errorf("gnark's own proof with %s fails VerifyFilesWith: %v", h, err)
			}
		})
	}
	if err := os.WriteFile(filepath.Join(dir, gnarksrc.HashFile), []byte("blake2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gnarksrc.LoadDir(dir); err == nil {
		t.Error("a directory naming an unknown hash-to-field loads")
	}
}

func readWitness(t *testing.T, path string) witness.Witness {
	t.Helper()
	w, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return w
}
