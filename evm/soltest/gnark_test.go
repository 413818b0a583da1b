package soltest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/internal/zkpipebin"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

func zkpipeBin(t *testing.T) string { return zkpipebin.Path(t, "runs it as a process") }

// TestGnarkVerifierInEVM: for a circuit without a commitment (mulchain) and
// one with a BSB22 commitment (commit) under each hash the Solidity
// verifier can compute, zkpipe setup → export solidity → prove --calldata;
// the contract, compiled by solc and run in go-ethereum's EVM, accepts
// every proof's calldata as zkpipe wrote it, and rejects a tampered proof
// (each point: A, B, C, the commitment, its proof of knowledge), a wrong
// public input, and another job's proof. The same proofs pass gnark's own
// groth16.Verify with the hash the directory records, and zkpipe verify.
func TestGnarkVerifierInEVM(t *testing.T) {
	for _, c := range []struct{ builtin, hash string }{
		{"mulchain", "default"},
		{"commit", "sha256"},
		{"commit", "keccak256"},
	} {
		t.Run(c.builtin+"-"+c.hash, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, c.builtin)
			zkpipe(t, "setup", "--builtin", c.builtin, "--constraints", "300", "--dir", dir, "--hash-to-field", c.hash)
			sol := filepath.Join(root, "Verifier.sol")
			zkpipe(t, "export", "solidity", "--circuit", dir, "--out", sol)
			ch := deploy(t, compile(t, sol, "Verifier"))

			jobs, out, results := filepath.Join(root, "jobs.jsonl"), filepath.Join(root, "out"), filepath.Join(root, "r.jsonl")
			if err := os.WriteFile(jobs, []byte("{\"id\":\"a\",\"generate\":{\"seed\":1}}\n{\"id\":\"b\",\"generate\":{\"seed\":2}}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			zkpipe(t, "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobs, "--out", out, "--results", results, "--calldata")
			lines, err := stream.ReadResultsFile(results)
			if err != nil || len(lines) != 2 {
				t.Fatalf("results: %d lines, %v", len(lines), err)
			}
			calls := map[string][]byte{}
			for _, l := range lines {
				if l.Error != "" || l.Calldata != filepath.Join(out, l.ID+".calldata") {
					t.Fatalf("%s: error %q, calldata %q", l.ID, l.Error, l.Calldata)
				}
				calls[l.ID] = readCalldata(t, l.Calldata)
				checkWithGnark(t, dir, l)
				zkpipe(t, "verify", "--circuit", dir, l.Proof)
			}
			for id, in := range calls {
				if _, err := ch.call(in); err != nil {
					t.Errorf("%s: the contract rejects zkpipe's proof: %v", id, err)
				}
			}

			// --skip-done answers from the files and writes the calldata again
			// (here: lost since), from the verified proof
			if err := os.Remove(filepath.Join(out, "a.calldata")); err != nil {
				t.Fatal(err)
			}
			zkpipe(t, "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobs, "--out", out, "--results", results, "--calldata", "--skip-done")
			again, err := stream.ReadResultsFile(results)
			if err != nil || len(again) != 2 {
				t.Fatalf("resumed results: %d lines, %v", len(again), err)
			}
			for _, l := range again {
				if !l.Resumed || l.Calldata == "" || !bytes.Equal(readCalldata(t, l.Calldata), calls[l.ID]) {
					t.Errorf("%s: resumed %v, calldata %q: not the proof's calldata", l.ID, l.Resumed, l.Calldata)
				}
			}

			// the layout (evm.Calldata): selector, offset, inputs, length, proof
			a := calls["a"]
			nbPub := len(lines[0].PublicInputs)
			proofAt := 4 + 32*(1+nbPub) + 32
			nbPoints := 4 // A, B (two words of G1 size), C
			if c.builtin == "commit" {
				nbPoints += 2 // the commitment and its proof of knowledge
			}
			if want := proofAt + 64*nbPoints; len(a) != want {
				t.Fatalf("calldata is %d bytes, want %d", len(a), want)
			}
			for p := 0; p < nbPoints; p++ {
				bad := bytes.Clone(a)
				bad[proofAt+64*p+31] ^= 1 // x of point p, off by one bit
				if _, err := ch.call(bad); !errors.Is(err, errReverted) {
					t.Errorf("a proof with point word %d tampered: %v, want a revert", p, err)
				}
			}
			bad := bytes.Clone(a)
			bad[4+32+31] ^= 1 // the first public input
			if _, err := ch.call(bad); !errors.Is(err, errReverted) {
				t.Errorf("a wrong public input: %v, want a revert", err)
			}
			other := bytes.Clone(a)
			copy(other[proofAt:], calls["b"][proofAt:]) // b's proof for a's inputs
			if _, err := ch.call(other); !errors.Is(err, errReverted) {
				t.Errorf("another job's proof: %v, want a revert", err)
			}
		})
	}
}

// TestExportRefusesWhatNoContractVerifies: a circuit with a commitment
// proved with gnark's default hash-to-field gets no contract (it would
// reject every proof), and the message names the fix.
func TestExportRefusesWhatNoContractVerifies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	zkpipe(t, "setup", "--builtin", "commit", "--constraints", "100", "--dir", dir)
	out, err := exec.Command(zkpipeBin(t), "export", "solidity", "--circuit", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "hash-to-field") || !strings.Contains(string(out), "sha256") {
		t.Fatalf("export of a default-hash commitment circuit: %v\n%s", err, out)
	}
	// recording the hash after setup is enough: the keys do not depend on it
	if err := os.WriteFile(filepath.Join(dir, gnarksrc.HashFile), []byte("sha256\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zkpipe(t, "export", "solidity", "--circuit", dir, "--out", filepath.Join(dir, "V.sol"))
	if err := os.WriteFile(filepath.Join(dir, gnarksrc.HashFile), []byte("md5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(zkpipeBin(t), "prove", "--device", "cpu", "--circuit", dir, "--jobs", "/dev/null", "--out", filepath.Join(dir, "o")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `hash-to-field "md5"`) {
		t.Fatalf("prove with an unknown hash-to-field: %v\n%s", err, out)
	}
}

func readCalldata(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if !strings.HasPrefix(s, "0x") {
		t.Fatalf("%s: not 0x-hex", path)
	}
	in, err := hex.DecodeString(s[2:])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return in
}

// checkWithGnark verifies l's proof with gnark's groth16.Verify, with the
// hash-to-field the directory records, and refuses it with another hash
// where the circuit has a commitment.
func checkWithGnark(t *testing.T, dir string, l stream.Result) {
	t.Helper()
	vk := groth16.NewVerifyingKey(ecc.BN254)
	proof := groth16.NewProof(ecc.BN254)
	pub, _ := witness.New(ecc.BN254.ScalarField())
	read := func(path string, f func([]byte) error) {
		b, err := os.ReadFile(path)
		if err == nil {
			err = f(b)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	read(filepath.Join(dir, gnarksrc.VKFile), func(b []byte) error { _, err := vk.ReadFrom(bytes.NewReader(b)); return err })
	read(l.Proof, func(b []byte) error { _, err := proof.ReadFrom(bytes.NewReader(b)); return err })
	read(l.Public, pub.UnmarshalBinary)
	h, err := gnarksrc.ReadHashToField(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, pub, h.VerifierOption()); err != nil {
		t.Errorf("%s: gnark's Verify with %s: %v", l.ID, h, err)
	}
	if len(pub.Vector().(fr.Vector)) != len(l.PublicInputs) {
		t.Errorf("%s: %d public inputs in the result line, %d in %s", l.ID, len(l.PublicInputs), len(pub.Vector().(fr.Vector)), l.Public)
	}
	if len(vk.(*groth16bn254.VerifyingKey).PublicAndCommitmentCommitted) > 0 {
		other := gnarksrc.HashDefault
		if h == gnarksrc.HashDefault {
			other = gnarksrc.HashSHA256
		}
		if err := groth16.Verify(proof, vk, pub, other.VerifierOption()); err == nil {
			t.Errorf("%s: gnark's Verify accepts it with %s as well as %s", l.ID, other, h)
		}
	}
}
