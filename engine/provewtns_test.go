package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	bls12381fr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// mulDir holds the committed snarkjs files of mul.circom (c = a·b).
const mulDir = "../source/circomsrc/testdata"

// snarkjs returns the snarkjs of $ZKPIPE_NODE_BIN, or of the tools
// .ci/circom-tools.sh installs: the tests never skip its check.
func snarkjs(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ZKPIPE_NODE_BIN")
	if bin == "" {
		out, err := exec.Command("bash", "../.ci/circom-tools.sh").Output()
		if err != nil {
			t.Fatalf("no snarkjs: set ZKPIPE_NODE_BIN to the output of `bash .ci/circom-tools.sh`: %v", err)
		}
		bin = strings.TrimSpace(string(out))
	}
	return filepath.Join(bin, "snarkjs")
}

func TestProveWtnsGivesWhatSnarkjsVerifies(t *testing.T) {
	ctx := context.Background()
	c, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: filepath.Join(mulDir, "mul.zkey")})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	e, err := New(ctx, cpuOptions(out), c, loadChain(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	data, err := os.ReadFile(filepath.Join(mulDir, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	wtns, err := circomsrc.ParseWtns(data)
	if err != nil {
		t.Fatal(err)
	}
	before := outFiles(t, out)
	proof, public, err := circomsrc.ProveWtns(ctx, e, "mul", wtns)
	if err != nil {
		t.Fatalf("ProveWtns: %v", err)
	}
	if after := outFiles(t, out); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("ProveWtns wrote into the output directory: %v", after)
	}

	pub, err := json.Marshal(public)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(filepath.Join(mulDir, "mul.public.json")); !bytes.Equal(bytes.Join(bytes.Fields(want), nil), pub) {
		t.Errorf("public inputs %s, snarkjs wrote %s", pub, want)
	}
	snarkjsVerifies(t, filepath.Join(mulDir, "mul.vkey.json"), proof, public)

	// bad witnesses fail alone, with errors that say what is wrong
	bad := append(wtns[:0:0], wtns...)
	bad[1].SetUint64(34) // the output c claimed 34, not 3^20·11
	if _, _, err := circomsrc.ProveWtns(ctx, e, "mul", bad); err == nil || !strings.Contains(err.Error(), "does not satisfy") {
		t.Errorf("ProveWtns of an unsatisfied witness: %v", err)
	}
	if _, _, err := circomsrc.ProveWtns(ctx, e, "mul", wtns[:2]); err == nil || !strings.Contains(err.Error(), "another circuit") {
		t.Errorf("ProveWtns of a short witness: %v", err)
	}
	if _, _, err := circomsrc.ProveWtns(ctx, e, "chain", wtns); err == nil || !strings.Contains(err.Error(), "takes circom circuits") {
		t.Errorf("ProveWtns of a gnark circuit: %v", err)
	}
	if _, err := e.Prove(ctx, "mul", chainWitness(t, loadChain(t), 1)); err == nil || !strings.Contains(err.Error(), "takes gnark circuits") {
		t.Errorf("Prove of a circom circuit: %v", err)
	}
	if _, _, err := circomsrc.ProveWtns(ctx, e, "mul", wtns); err != nil {
		t.Errorf("ProveWtns after the failures: %v", err)
	}
}

// A BLS12-381 zkey's witness goes through ProveWtnsOf, snarkjs verifies the
// proof, and each curve's witness is refused by the other's circuit.
func TestProveWtnsOfBLS12381GivesWhatSnarkjsVerifies(t *testing.T) {
	ctx := context.Background()
	blsDir := filepath.Join(mulDir, "bls12381")
	bls, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: filepath.Join(blsDir, "blsmul.zkey")})
	if err != nil {
		t.Fatal(err)
	}
	bn, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: filepath.Join(mulDir, "mul.zkey")})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(ctx, cpuOptions(t.TempDir()), bls, bn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	data, err := os.ReadFile(filepath.Join(blsDir, "blsmul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	id, w, err := circomsrc.ParseWtnsOf(data)
	if err != nil || id != curve.BLS12_381 {
		t.Fatalf("ParseWtnsOf: %v, %v", id, err)
	}
	wtns := proofdata.Elements[bls12381fr.Element](w)
	proof, public, err := circomsrc.ProveWtnsOf(ctx, e, "blsmul", wtns)
	if err != nil {
		t.Fatalf("ProveWtnsOf: %v", err)
	}
	snarkjsVerifies(t, filepath.Join(blsDir, "blsmul.vkey.json"), proof, public)

	bnData, err := os.ReadFile(filepath.Join(mulDir, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	bnWtns, err := circomsrc.ParseWtns(bnData)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := circomsrc.ProveWtnsOf(ctx, e, "blsmul", bnWtns); err == nil || !strings.Contains(err.Error(), "bls12-381") || !strings.Contains(err.Error(), "bn254") {
		t.Errorf("a BN254 witness for the BLS12-381 circuit: %v, want a refusal naming both curves", err)
	}
	if _, _, err := circomsrc.ProveWtnsOf(ctx, e, "mul", wtns); err == nil || !strings.Contains(err.Error(), "bls12-381") || !strings.Contains(err.Error(), "bn254") {
		t.Errorf("a BLS12-381 witness for the BN254 circuit: %v, want a refusal naming both curves", err)
	}
	if _, _, err := circomsrc.ProveWtns(ctx, e, "mul", bnWtns); err != nil {
		t.Errorf("the BN254 circuit after the refusals: %v", err)
	}
}

// snarkjsVerifies runs snarkjs groth16 verify, the independent verifier, on
// the proof and public inputs written as JSON files.
func snarkjsVerifies(t *testing.T, vkeyPath string, proof *circomsrc.Proof, public []string) {
	t.Helper()
	dir := t.TempDir()
	pj, err := json.Marshal(proof.JSON())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := json.Marshal(public)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"proof.json": pj, "public.json": pub} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vkey, err := filepath.Abs(vkeyPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(snarkjs(t), "groth16", "verify", vkey, "public.json", "proof.json")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(msg), "OK") {
		t.Errorf("snarkjs groth16 verify %s: %v: %s", vkeyPath, err, msg)
	}
}
