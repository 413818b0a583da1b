package gnarksrc

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/curve"
)

type squareCircuit struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *squareCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	// a commitment, as the built-in commit's (the CLI test's circuit)
	cm, err := api.(frontend.Committer).Commit(c.X)
	if err != nil {
		return err
	}
	api.AssertIsDifferent(cm, 0)
	return nil
}

// A proof of one curve given for a circuit of the other is named as such,
// every time. Each point's first byte says whether it is compressed, so
// some BLS12-381 proofs (random points) have the layout of a BN254 one and
// failed only as they decoded ("invalid compressed coordinate"): the CLI
// test that checks one proof failed now and then.
func TestProofOfTheOtherCurveNamed(t *testing.T) {
	vks := map[curve.ID]groth16.VerifyingKey{}
	proofs := map[curve.ID][][]byte{}
	for _, id := range []curve.ID{curve.BN254, curve.BLS12_381} {
		ccs, err := frontend.Compile(id.ECC().ScalarField(), r1cs.NewBuilder, &squareCircuit{})
		if err != nil {
			t.Fatal(err)
		}
		pk, vk, err := groth16.Setup(ccs)
		if err != nil {
			t.Fatal(err)
		}
		vks[id] = vk
		w, err := frontend.NewWitness(&squareCircuit{X: 3, Y: 9}, id.ECC().ScalarField())
		if err != nil {
			t.Fatal(err)
		}
		n := 150
		if testing.Short() {
			n = 40
		}
		for i := 0; i < n; i++ {
			proof, err := groth16.Prove(ccs, pk, w)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := proof.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			if _, err := decodeProof(vk, "own.proof", buf.Bytes()); err != nil {
				t.Fatalf("%s proof %d for its own circuit: %v", id, i, err)
			}
			proofs[id] = append(proofs[id], buf.Bytes())
		}
	}
	for _, c := range [][2]curve.ID{{curve.BLS12_381, curve.BN254}, {curve.BN254, curve.BLS12_381}} {
		of, fr := c[0], c[1]
		want := fmt.Sprintf("a %s proof for a %s circuit", strings.ToUpper(of.String()), strings.ToUpper(fr.String()))
		for i, data := range proofs[of] {
			_, err := decodeProof(vks[fr], "p.proof", data)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s proof %d for a %s circuit: %v; want %q", of, i, fr, err, want)
			}
		}
	}
}
