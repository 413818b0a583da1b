package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// zkpipe prove --zkey --wasm over wtns and input jobs, good and bad, then
// zkpipe verify --vkey on each proof and on a tampered one; with
// $ZKPIPE_NODE_BIN set (scripts/test sets it), snarkjs checks them too. The
// circuit is source/circomsrc/testdata's (mul.circom, a = 0 rejected).
func TestCircomProveAndVerify(t *testing.T) {
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, "out")
	jobs := strings.Join([]string{
		fmt.Sprintf(`{"id":"w","wtns":%q}`, filepath.Join(td, "mul.wtns")),
		`{"id":"i","input":{"a":"7","b":"2"}}`,
		`{"id":"rejected","input":{"a":"0","b":"2"}}`,
		fmt.Sprintf(`{"id":"notwtns","wtns":%q}`, filepath.Join(td, "mul.vkey.json")),
		`{"id":"gnark","witness":"x.wit"}`,
	}, "\n") + "\n"
	jobsFile, results := filepath.Join(root, "jobs.jsonl"), filepath.Join(root, "results.jsonl")
	if err := os.WriteFile(jobsFile, []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"zkpipe", "prove", "--device", "cpu", "--zkey", filepath.Join(td, "mul.zkey"), "--wasm", filepath.Join(td, "mul.wasm"),
		"--r1cs", filepath.Join(td, "mul.r1cs"), "--jobs", jobsFile, "--out", out, "--results", results}
	lines := runProve(t, results, args...)
	wantErr := map[string]string{"rejected": "assert failed", "notwtns": "not a wtns file", "gnark": "give wtns or input"}
	var proofs []string
	for _, l := range lines {
		if want, ok := wantErr[l.ID]; ok {
			if !strings.Contains(l.Error, want) {
				t.Errorf("%s: error %q, want %q", l.ID, l.Error, want)
			}
			continue
		}
		if l.Error != "" || l.Circuit != "mul" {
			t.Errorf("%s: circuit %q, error %q", l.ID, l.Circuit, l.Error)
			continue
		}
		proofs = append(proofs, l.Proof, l.Public)
	}
	if len(lines) != 5 || len(proofs) != 4 {
		t.Fatalf("%d results, %d proofs; want 5 and 2", len(lines), len(proofs)/2)
	}
	vkey := filepath.Join(td, "mul.vkey.json")
	if err := App().Run(append([]string{"zkpipe", "verify", "--vkey", vkey}, proofs...)); err != nil {
		t.Errorf("zkpipe verify: %v", err)
	}
	// The files of a pair may come in either order; one job's proof does not
	// prove the other's public inputs (a = 3 and a = 7).
	if err := App().Run([]string{"zkpipe", "verify", "--vkey", vkey, proofs[1], proofs[0]}); err != nil {
		t.Errorf("zkpipe verify, public.json first: %v", err)
	}
	if err := App().Run([]string{"zkpipe", "verify", "--vkey", vkey, proofs[0], proofs[3]}); err == nil {
		t.Error("zkpipe verify accepts a proof with another proof's public inputs")
	}
	if bin := os.Getenv("ZKPIPE_NODE_BIN"); bin != "" {
		for i := 0; i < len(proofs); i += 2 {
			o, err := exec.Command(filepath.Join(bin, "snarkjs"), "groth16", "verify", vkey, proofs[i+1], proofs[i]).CombinedOutput()
			if err != nil || !strings.Contains(string(o), "OK!") {
				t.Errorf("snarkjs rejects %s: %v %s", proofs[i], err, o)
			}
		}
	}
	if err := App().Run([]string{"zkpipe", "prove", "--zkey", "a.zkey", "--wasm", "a.wasm", "--wasm", "b.wasm", "--jobs", jobsFile}); err == nil ||
		!strings.Contains(err.Error(), "2 --wasm for 1 --zkey") {
		t.Errorf("two --wasm for one --zkey: %v", err)
	}
}

// zkpipe prove with a BN254 and a BLS12-381 circom circuit in one stream
// (--device cpu): every proof verifies with its own key, by zkpipe verify
// and by snarkjs; a witness of the other curve and an input the circuit
// rejects fail alone. The BLS12-381 circuit is
// source/circomsrc/testdata/bls12381's blsmul (mul over BLS12-381).
func TestCircomBothCurvesInOneStream(t *testing.T) {
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	bls := filepath.Join(td, "bls12381")
	root := t.TempDir()
	out := filepath.Join(root, "out")
	jobs := strings.Join([]string{
		fmt.Sprintf(`{"id":"bw","circuit":"blsmul","wtns":%q}`, filepath.Join(bls, "blsmul.wtns")),
		`{"id":"mi","circuit":"mul","input":{"a":"7","b":"2"}}`,
		`{"id":"bi","circuit":"blsmul","input":{"a":"7","b":"2"}}`,
		fmt.Sprintf(`{"id":"bn-for-bls","circuit":"blsmul","wtns":%q}`, filepath.Join(td, "mul.wtns")),
		fmt.Sprintf(`{"id":"bls-for-bn","circuit":"mul","wtns":%q}`, filepath.Join(bls, "blsmul.wtns")),
		`{"id":"rejected","circuit":"blsmul","input":{"a":"0","b":"2"}}`,
		fmt.Sprintf(`{"id":"mw","circuit":"mul","wtns":%q}`, filepath.Join(td, "mul.wtns")),
	}, "\n") + "\n"
	jobsFile, results := filepath.Join(root, "jobs.jsonl"), filepath.Join(root, "results.jsonl")
	if err := os.WriteFile(jobsFile, []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := runProve(t, results, "zkpipe", "prove", "--device", "cpu",
		"--zkey", filepath.Join(td, "mul.zkey"), "--wasm", filepath.Join(td, "mul.wasm"),
		"--zkey", filepath.Join(bls, "blsmul.zkey"), "--wasm", filepath.Join(bls, "blsmul.wasm"),
		"--jobs", jobsFile, "--out", out, "--results", results)
	wantErr := map[string]string{
		"bn-for-bls": "is a bn254 witness (its prime is bn254's r), circuit blsmul is bls12-381's",
		"bls-for-bn": "is a bls12-381 witness (its prime is bls12-381's r), circuit mul is bn254's",
		"rejected":   "assert failed",
	}
	vkeys := map[string]string{"mul": filepath.Join(td, "mul.vkey.json"), "blsmul": filepath.Join(bls, "blsmul.vkey.json")}
	proved := 0
	for _, l := range lines {
		if want, ok := wantErr[l.ID]; ok {
			if !strings.Contains(l.Error, want) || !strings.Contains(l.Error, l.ID) {
				t.Errorf("%s: error %q, want one naming the job and containing %q", l.ID, l.Error, want)
			}
			continue
		}
		if l.Error != "" {
			t.Errorf("%s: %s", l.ID, l.Error)
			continue
		}
		proved++
		vkey := vkeys[l.Circuit]
		if err := App().Run([]string{"zkpipe", "verify", "--vkey", vkey, l.Proof, l.Public}); err != nil {
			t.Errorf("%s: zkpipe verify: %v", l.ID, err)
		}
		o, err := exec.Command(snarkjs(t), "groth16", "verify", vkey, l.Public, l.Proof).CombinedOutput()
		if err != nil || !strings.Contains(string(o), "OK!") {
			t.Errorf("%s: snarkjs rejects the %s proof: %v %s", l.ID, l.Circuit, err, o)
		}
	}
	if len(lines) != 7 || proved != 4 {
		t.Fatalf("%d results, %d proofs; want 7 and 4", len(lines), proved)
	}
	// one curve's key does not verify the other's proof
	var blsProof, blsPublic string
	for _, l := range lines {
		if l.ID == "bw" {
			blsProof, blsPublic = l.Proof, l.Public
		}
	}
	if err := App().Run([]string{"zkpipe", "verify", "--vkey", vkeys["mul"], blsProof, blsPublic}); err == nil {
		t.Error("a BN254 key verifies a BLS12-381 proof")
	}
}
