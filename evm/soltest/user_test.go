package soltest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/std/rangecheck"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// userCircuit is a user's own circuit with three public inputs, two of
// them committed to by a std range check's BSB22 commitment.
type userCircuit struct {
	X       frontend.Variable
	A, B, C frontend.Variable `gnark:",public"`
}

func (c *userCircuit) Define(api frontend.API) error {
	rangecheck.New(api).Check(c.X, 16)
	rangecheck.New(api).Check(c.C, 8)
	api.AssertIsEqual(api.Mul(c.X, c.X), c.A)
	api.AssertIsEqual(api.Add(c.A, c.X), c.B)
	return nil
}

// TestUserCircuitInEVM: a circuit directory written by gnark's own calls
// (WriteTo: the compressed encoding gnark users save), with several public
// inputs and a commitment, sha256 recorded beside it: zkpipe's proof of a
// gnark binary witness, through its calldata, passes gnark's exported
// contract in go-ethereum's EVM; each input changed fails it.
func TestUserCircuitInEVM(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "user")
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &userCircuit{})
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	full, err := frontend.NewWitness(&userCircuit{X: 300, A: 90000, B: 90300, C: 7}, ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	wpath := filepath.Join(root, "w.witness")
	write := func(path string, wt func(*bytes.Buffer) error) {
		var buf bytes.Buffer
		if err := wt(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, gnarksrc.R1CSFile), func(b *bytes.Buffer) error { _, err := ccs.WriteTo(b); return err })
	write(filepath.Join(dir, gnarksrc.PKFile), func(b *bytes.Buffer) error { _, err := pk.WriteTo(b); return err })
	write(filepath.Join(dir, gnarksrc.VKFile), func(b *bytes.Buffer) error { _, err := vk.WriteTo(b); return err })
	write(wpath, func(b *bytes.Buffer) error { _, err := full.WriteTo(b); return err })
	if err := gnarksrc.WriteHashToField(dir, gnarksrc.HashSHA256); err != nil {
		t.Fatal(err)
	}

	sol := filepath.Join(root, "Verifier.sol")
	zkpipe(t, "export", "solidity", "--circuit", dir, "--out", sol)
	ch := deploy(t, compile(t, sol, "Verifier"))
	jobs, out, results := filepath.Join(root, "jobs.jsonl"), filepath.Join(root, "out"), filepath.Join(root, "r.jsonl")
	os.WriteFile(jobs, []byte(`{"id":"u","witness":"`+wpath+`"}`+"\n"), 0o644)
	zkpipe(t, "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobs, "--out", out, "--results", results, "--calldata")
	lines, err := stream.ReadResultsFile(results)
	if err != nil || len(lines) != 1 || lines[0].Error != "" || len(lines[0].PublicInputs) != 3 {
		t.Fatalf("results %+v, %v", lines, err)
	}
	in := readCalldata(t, lines[0].Calldata)
	if _, err := ch.call(in); err != nil {
		t.Fatalf("the contract rejects zkpipe's proof: %v", err)
	}
	for i := 0; i < 3; i++ {
		bad := bytes.Clone(in)
		bad[4+32*(1+i)+31] ^= 1
		if _, err := ch.call(bad); !errors.Is(err, errReverted) {
			t.Errorf("public input %d changed: %v, want a revert", i, err)
		}
	}
}
