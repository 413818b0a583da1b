package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// prove --calldata over a circuit with a commitment whose proofs hash it
// with gnark's default hash-to-field is refused before a job is read, as
// export solidity refuses its contract (no Solidity verifier computes that
// hash: the calldata would fail every contract), naming the fix and
// writing nothing; with sha256 recorded, the same run writes each proof's
// calldata.
func TestProveCalldataRefusesTheDefaultHashWithACommitment(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "commit")
	if err := App().Run([]string{"zkpipe", "setup", "--builtin", "commit", "--constraints", "64", "--dir", dir}); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, `{"id":"p","generate":{"seed":5}}`)
	out, results := filepath.Join(root, "out"), filepath.Join(root, "r.jsonl")
	args := []string{"zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobs, "--out", out, "--results", results, "--mem-status", "0", "--calldata"}
	err := App().Run(args)
	if err == nil || !strings.Contains(err.Error(), "default hash-to-field") || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("prove --calldata, a commitment on the default hash: %v; want it refused naming the hash and sha256", err)
	}
	for _, p := range []string{results, filepath.Join(out, "p.proof"), filepath.Join(out, "p.calldata")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written", p)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "hash-to-field"), []byte("sha256\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := runProve(t, results, args...)
	if len(lines) != 1 || lines[0].Error != "" || lines[0].Calldata == "" {
		t.Fatalf("prove --calldata on sha256: %+v", lines)
	}
	if b, err := os.ReadFile(lines[0].Calldata); err != nil || len(b) == 0 {
		t.Fatalf("calldata: %v, %d bytes", err, len(b))
	}
}
