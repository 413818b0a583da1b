package keygen_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/frontend/cs/scs"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
)

var bothCurves = []curve.ID{curve.BN254, curve.BLS12_381}

// pubCommit has two public inputs, and two BSB22 commitments, one of them
// to a public input: its keys have public-and-commitment-committed wires,
// two Pedersen keys, and commitment wires among the public ones of vk.G1.K.
type pubCommit struct {
	X, Y frontend.Variable `gnark:",public"`
	S    [3]frontend.Variable
}

func (c *pubCommit) Define(api frontend.API) error {
	acc := api.Mul(c.S[0], c.S[1])
	acc = api.Mul(acc, c.S[2])
	api.AssertIsEqual(acc, c.Y)
	cm := api.(frontend.Committer)
	c1, err := cm.Commit(c.X, c.S[0], c.S[1])
	if err != nil {
		return err
	}
	api.AssertIsEqual(api.Mul(c1, api.Sub(c.X, c.S[0])), 0)
	c2, err := cm.Commit(c.S[2], acc)
	if err != nil {
		return err
	}
	api.AssertIsEqual(api.Mul(c2, api.Sub(c.Y, acc)), 0)
	return nil
}

func pubCommitWitness(t *testing.T, id curve.ID, s0 int64) witness.Witness {
	t.Helper()
	a := &pubCommit{X: s0, Y: s0 * 5 * 7, S: [3]frontend.Variable{s0, 5, 7}}
	w, err := frontend.NewWitness(a, id.ECC().ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// circuitCase is a compiled circuit and two of its satisfying witnesses
// with different public inputs.
type circuitCase struct {
	name   string
	ccs    constraint.ConstraintSystem
	w1, w2 witness.Witness
}

func cases(t *testing.T, id curve.ID) []circuitCase {
	t.Helper()
	var out []circuitCase
	for _, name := range []string{"mulchain", "bits", "commit"} {
		b, err := circuits.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		const n = 300
		ccs, err := b.CompileOn(id, n)
		if err != nil {
			t.Fatal(err)
		}
		w1, err := b.WitnessOn(id, n, 1)
		if err != nil {
			t.Fatal(err)
		}
		w2, err := b.WitnessOn(id, n, 2)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, circuitCase{name, ccs, w1, w2})
	}
	ccs, err := frontend.Compile(id.ECC().ScalarField(), r1cs.NewBuilder, &pubCommit{})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, circuitCase{"pubcommit", ccs, pubCommitWitness(t, id, 3), pubCommitWitness(t, id, 4)})
	return out
}

func public(t *testing.T, w witness.Witness) witness.Witness {
	t.Helper()
	p, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Keys from keygen.Setup prove with gnark's own groth16.Prove and verify
// with gnark's groth16.Verify, on both curves, for a circuit of every
// kind: one public input and every wire significant (mulchain), mostly
// 0/1 wires (bits), a BSB22 commitment (commit), and two commitments,
// one to a public input (pubcommit). The proof does not verify against
// another witness's public inputs, and a key written and read back by
// gnark's codecs still verifies it.
func TestKeysProveAndVerifyWithGnark(t *testing.T) {
	for _, id := range bothCurves {
		for _, c := range cases(t, id) {
			t.Run(fmt.Sprintf("%s/%s", id, c.name), func(t *testing.T) {
				pk, vk, err := keygen.Setup(c.ccs)
				if err != nil {
					t.Fatal(err)
				}
				if pk.CurveID() != id.ECC() || vk.CurveID() != id.ECC() {
					t.Fatalf("keys of %s, %s for a %s circuit", pk.CurveID(), vk.CurveID(), id)
				}
				proof, err := groth16.Prove(c.ccs, pk, c.w1)
				if err != nil {
					t.Fatal(err)
				}
				if err := groth16.Verify(proof, vk, public(t, c.w1)); err != nil {
					t.Fatalf("gnark rejects the proof: %v", err)
				}
				if err := groth16.Verify(proof, vk, public(t, c.w2)); err == nil {
					t.Fatal("gnark accepts the proof for another witness's public inputs")
				}
				var buf bytes.Buffer
				if _, err := vk.WriteTo(&buf); err != nil {
					t.Fatal(err)
				}
				vk2 := groth16.NewVerifyingKey(id.ECC())
				if _, err := vk2.ReadFrom(&buf); err != nil {
					t.Fatal(err)
				}
				buf.Reset()
				if _, err := pk.WriteRawTo(&buf); err != nil {
					t.Fatal(err)
				}
				pk2 := groth16.NewProvingKey(id.ECC())
				if _, err := pk2.UnsafeReadFrom(&buf); err != nil {
					t.Fatal(err)
				}
				proof2, err := groth16.Prove(c.ccs, pk2, c.w2)
				if err != nil {
					t.Fatal(err)
				}
				if err := groth16.Verify(proof2, vk2, public(t, c.w2)); err != nil {
					t.Fatalf("gnark rejects a proof from the keys read back: %v", err)
				}
			})
		}
	}
}

// Two setups of one circuit draw fresh toxic waste: no shared [α]₁, [β]₁,
// [δ]₁ or K point (gnark's IsDifferent), and a proof from one does not
// verify with the other's key.
func TestTwoSetupsDiffer(t *testing.T) {
	for _, id := range bothCurves {
		c := cases(t, id)[3]
		pk1, vk1, err := keygen.Setup(c.ccs)
		if err != nil {
			t.Fatal(err)
		}
		pk2, vk2, err := keygen.Setup(c.ccs)
		if err != nil {
			t.Fatal(err)
		}
		if !pk1.IsDifferent(pk2) || !vk1.IsDifferent(vk2) {
			t.Fatalf("%s: two setups share points", id)
		}
		proof, err := groth16.Prove(c.ccs, pk1, c.w1)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(proof, vk2, public(t, c.w1)); err == nil {
			t.Fatalf("%s: a proof from one setup verifies with another's key", id)
		}
	}
}

// A PLONK constraint system is refused, naming what it is.
func TestRefusesNonR1CS(t *testing.T) {
	ccs, err := frontend.Compile(curve.BN254.ECC().ScalarField(), scs.NewBuilder, &pubCommit{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := keygen.Setup(ccs); err == nil {
		t.Fatal("keygen set up a SparseR1CS")
	} else {
		t.Log(err)
	}
}
