package keygen

// Circuits for the tests of both test packages (keygen and keygen_test).

import (
	"io"
	"testing"

	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
)

var BothCurves = []curve.ID{curve.BN254, curve.BLS12_381}

// PubCommit has two public inputs, and two BSB22 commitments, one of them
// to a public input: its keys have public-and-commitment-committed wires,
// two Pedersen keys, and commitment wires among the public ones of vk.G1.K.
type PubCommit struct {
	X, Y frontend.Variable `gnark:",public"`
	S    [3]frontend.Variable
}

func (c *PubCommit) Define(api frontend.API) error {
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
	a := &PubCommit{X: s0, Y: s0 * 5 * 7, S: [3]frontend.Variable{s0, 5, 7}}
	w, err := frontend.NewWitness(a, id.ECC().ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Case is a compiled circuit and two of its satisfying witnesses
// with different public inputs.
type Case struct {
	Name   string
	CCS    constraint.ConstraintSystem
	W1, W2 witness.Witness
}

func Cases(t *testing.T, id curve.ID) []Case {
	t.Helper()
	var out []Case
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
		out = append(out, Case{name, ccs, w1, w2})
	}
	ccs, err := frontend.Compile(id.ECC().ScalarField(), r1cs.NewBuilder, &PubCommit{})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, Case{"pubcommit", ccs, pubCommitWitness(t, id, 3), pubCommitWitness(t, id, 4)})
	return out
}

func Public(t *testing.T, w witness.Witness) witness.Witness {
	t.Helper()
	p, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// SetChunkBytes sets the memory of a chunk of a point slice written to a
// file (WriteRawProvingKey's, SetupTo's with a device or without), so a
// test's small key takes many chunks; the returned func restores it.
func SetChunkBytes(n int) (restore func()) {
	old, oldDevice := chunkBytes, deviceChunkBytes
	chunkBytes, deviceChunkBytes = n, n
	return func() { chunkBytes, deviceChunkBytes = old, oldDevice }
}

// SetToxicWaste has every Setup until restore draw its toxic waste from r
// instead of crypto/rand (testToxicWaste): two setups from one seed get one
// secret, so their keys can be compared. Not concurrent with other Setups.
func SetToxicWaste(r io.Reader) (restore func()) {
	old := testToxicWaste
	testToxicWaste = r
	return func() { testToxicWaste = old }
}
