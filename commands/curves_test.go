package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// zkpipe setup --curve bls12-381 writes a BLS12-381 circuit directory (the
// default stays BN254); prove takes both directories in one stream, the
// curve read from each one's files; zkpipe verify accepts each proof with
// its own circuit's key and rejects it with the other's; an unknown
// --curve is a usage error.
func TestSetupProveVerifyBothCurves(t *testing.T) {
	root := t.TempDir()
	dirs := map[curve.ID]string{curve.BN254: filepath.Join(root, "bn"), curve.BLS12_381: filepath.Join(root, "bls")}
	if err := App().Run([]string{"zkpipe", "setup", "--builtin", "commit", "--constraints", "64", "--dir", dirs[curve.BN254]}); err != nil {
		t.Fatal(err)
	}
	if err := App().Run([]string{"zkpipe", "setup", "--builtin", "commit", "--constraints", "64", "--dir", dirs[curve.BLS12_381], "--curve", "bls12-381"}); err != nil {
		t.Fatal(err)
	}
	if err := App().Run([]string{"zkpipe", "setup", "--builtin", "commit", "--dir", filepath.Join(root, "x"), "--curve", "bw6-761"}); err == nil {
		t.Error("setup took --curve bw6-761")
	}
	for id, dir := range dirs {
		vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := curve.FromECC(vk.CurveID()); err != nil || got != id {
			t.Fatalf("%s: a verifying key of %s (%v), want %s", dir, vk.CurveID(), err, id)
		}
		var meta gnarksrc.Meta
		b, _ := os.ReadFile(filepath.Join(dir, gnarksrc.MetaFile))
		if json.Unmarshal(b, &meta) != nil || meta.Curve != id.String() {
			t.Fatalf("%s: circuit.json says curve %q, want %s", dir, meta.Curve, id)
		}
	}
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, `{"id":"n1","circuit":"bn","generate":{"seed":1}}`, `{"id":"b1","circuit":"bls","generate":{"seed":1}}`,
		`{"id":"b2","circuit":"bls","generate":{"seed":2}}`)
	out, results := filepath.Join(root, "out"), filepath.Join(root, "r.jsonl")
	lines := runProve(t, results, "zkpipe", "prove", "--device", "cpu", "--circuit", dirs[curve.BN254], "--circuit", dirs[curve.BLS12_381],
		"--jobs", jobs, "--out", out, "--results", results, "--mem-status", "0")
	if len(lines) != 3 {
		t.Fatalf("%d result lines", len(lines))
	}
	for _, l := range lines {
		if l.Error != "" {
			t.Fatalf("%s: %s", l.ID, l.Error)
		}
	}
	verify := func(dir string, proofs ...string) error {
		return App().Run(append([]string{"zkpipe", "verify", "--circuit", dir}, proofs...))
	}
	bnProof, blsProofs := filepath.Join(out, "n1.proof"), []string{filepath.Join(out, "b1.proof"), filepath.Join(out, "b2.proof")}
	if err := verify(dirs[curve.BN254], bnProof); err != nil {
		t.Errorf("verify of the BN254 proof: %v", err)
	}
	if err := verify(dirs[curve.BLS12_381], blsProofs...); err != nil {
		t.Errorf("verify of the BLS12-381 proofs: %v", err)
	}
	// each the other's: refused, saying so (not "truncated")
	for _, c := range []struct{ dir, proof, want string }{
		{dirs[curve.BLS12_381], bnProof, "a BN254 proof for a BLS12-381 circuit"},
		{dirs[curve.BN254], blsProofs[0], "a BLS12-381 proof for a BN254 circuit"},
	} {
		cmd := exec.Command(binary(t), "verify", "--circuit", c.dir, c.proof)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if code := exitCode(t, cmd); code != 1 || !strings.Contains(stdout.String(), "REJECTED") || !strings.Contains(stdout.String(), c.want) {
			t.Errorf("verify --circuit %s %s: exit %d, %q; want 1 and %q", filepath.Base(c.dir), filepath.Base(c.proof), code, stdout.String(), c.want)
		}
	}
}
