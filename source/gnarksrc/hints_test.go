package gnarksrc_test

import (
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// userInverse is a user's own hint: out = 1/in. Nothing registers it with
// gnark's global registry; only Options.Hints gives it to the solver.
func userInverse(field *big.Int, in, out []*big.Int) error {
	if out[0].ModInverse(in[0], field) == nil {
		return fmt.Errorf("no inverse")
	}
	return nil
}

// inverse proves knowledge of X with X·Y = 1, Y public, solving Y by hint.
type inverse struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *inverse) Define(api frontend.API) error {
	inv, err := api.Compiler().NewHint(userInverse, 1, c.X)
	if err != nil {
		return err
	}
	api.AssertIsEqual(api.Mul(inv[0], c.X), 1)
	api.AssertIsEqual(inv[0], c.Y)
	return nil
}

func TestUserHintsReachTheSolver(t *testing.T) {
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &inverse{})
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	x := big.NewInt(7)
	y := new(big.Int).ModInverse(x, ecc.BN254.ScalarField())
	full, err := frontend.NewWitness(&inverse{X: x, Y: y}, ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	wpath := t.TempDir() + "/inv.witness"
	data, _ := full.MarshalBinary()
	if err := writeFile(wpath, data); err != nil {
		t.Fatal(err)
	}
	for _, hints := range [][]solver.Hint{nil, {userInverse}} {
		t.Run(fmt.Sprintf("hints=%d", len(hints)), func(t *testing.T) {
			c, err := gnarksrc.NewWith("inv", ccs, pk, vk, nil, gnarksrc.Options{Hints: hints})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			res := provertest.Run(t, provertest.Config(dir, 1, 1), []*stages.Circuit{c},
				[]*stages.Job{{Request: stream.Request{ID: "inv", Witness: wpath}}}, time.Minute)
			if len(res) != 1 {
				t.Fatalf("%d results", len(res))
			}
			if hints == nil {
				if !strings.Contains(res[0].Error, "missing hint") {
					t.Errorf("without the hint: %q", res[0].Error)
				}
				return
			}
			if res[0].Error != "" {
				t.Fatal(res[0].Error)
			}
			if err := gnarksrc.VerifyFiles(vk, res[0].Proof, res[0].Public); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }
