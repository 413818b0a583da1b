package commands

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// zkpipe verify of a proof of a commitment circuit made before its
// hash-to-field changed says which hash-to-field it checked with and where
// that came from, that a proof made under another does not verify with
// it, and which one the proof verifies under; --hash-to-field checks it
// under that one. A proof that verifies under none says so; a circuit
// without commitments says nothing of hash-to-field; --hash-to-field with
// --vkey is refused. On both curves.
func TestVerifySaysWhichHashToField(t *testing.T) {
	for _, curve := range []string{"bn254", "bls12-381"} {
		t.Run(curve, func(t *testing.T) {
			root := t.TempDir()
			dir, plain := filepath.Join(root, "commit"), filepath.Join(root, "chain")
			for _, s := range [][]string{{"commit", dir}, {"mulchain", plain}} {
				if code, stderr := runBin(t, "setup", "--device", "cpu", "--curve", curve, "--builtin", s[0], "--constraints", "300", "--dir", s[1]); code != 0 {
					t.Fatalf("setup %s: exit %d\n%s", s[0], code, stderr)
				}
			}
			jobs := filepath.Join(root, "jobs.jsonl")
			writeJobs(t, jobs, `{"id":"a","generate":{"seed":1}}`, `{"id":"b","generate":{"seed":2}}`)
			out, plainOut := filepath.Join(root, "out"), filepath.Join(root, "plain")
			for _, p := range [][2]string{{dir, out}, {plain, plainOut}} {
				if code, stderr := runBin(t, "prove", "--device", "cpu", "--circuit", p[0], "--jobs", jobs, "--out", p[1]); code != 0 {
					t.Fatalf("prove: exit %d\n%s", code, stderr)
				}
			}
			proof := filepath.Join(out, "a.proof")
			verify := func(args ...string) (int, string, string) {
				cmd := exec.Command(binary(t), append([]string{"verify"}, args...)...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				code := exitCode(t, cmd)
				return code, stdout.String(), stderr.String()
			}
			if code, o, e := verify("--circuit", dir, proof); code != 0 {
				t.Fatalf("verify under the proof's own hash-to-field: exit %d\n%s%s", code, o, e)
			}
			if err := os.WriteFile(filepath.Join(dir, "hash-to-field"), []byte("sha256\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, o, e := verify("--circuit", dir, proof)
			for _, want := range []string{"REJECTED", "checked with hash-to-field sha256", "a proof made under another hash-to-field does not verify with it",
				"it verifies under default", "--hash-to-field default"} {
				if code != 1 || !strings.Contains(o, want) {
					t.Errorf("after echo sha256 > hash-to-field: exit %d, %q; want exit 1 and %q", code, o, want)
				}
			}
			if want := "the hash-to-field was sha256, from " + filepath.Join(dir, "hash-to-field"); !strings.Contains(e, want) {
				t.Errorf("stderr %q, want %q", e, want)
			}
			if code, o, e := verify("--circuit", dir, "--hash-to-field", "default", proof); code != 0 || !strings.Contains(o, "ok") {
				t.Errorf("--hash-to-field default: exit %d, %s%s", code, o, e)
			}
			if code, o, e := verify("--circuit", dir, "--hash-to-field", "keccak256", proof); code != 1 || !strings.Contains(o, "checked with hash-to-field keccak256") ||
				!strings.Contains(o, "it verifies under default") || !strings.Contains(e, "from --hash-to-field") {
				t.Errorf("--hash-to-field keccak256: exit %d, %s%s", code, o, e)
			}
			// b's proof with a's public inputs verifies under none
			swapped := filepath.Join(root, "swapped.proof")
			b, _ := os.ReadFile(filepath.Join(out, "b.proof"))
			if err := os.WriteFile(swapped, b, 0o644); err != nil {
				t.Fatal(err)
			}
			pa, _ := os.ReadFile(filepath.Join(out, "a.public"))
			if err := os.WriteFile(filepath.Join(root, "swapped.public"), pa, 0o644); err != nil {
				t.Fatal(err)
			}
			if code, o, _ := verify("--circuit", dir, "--hash-to-field", "default", swapped); code != 1 || !strings.Contains(o, "nor under sha256 or keccak256") {
				t.Errorf("another proof's public inputs: exit %d, %s", code, o)
			}
			if err := os.Remove(filepath.Join(dir, "hash-to-field")); err != nil {
				t.Fatal(err)
			}
			if code, o, e := verify("--circuit", dir, swapped); code != 1 || !strings.Contains(e, "gnark's default ("+dir+" has no hash-to-field file)") {
				t.Errorf("no hash-to-field file: exit %d, %s%s", code, o, e)
			}
			// no commitments: a rejection is only that
			pb, _ := os.ReadFile(filepath.Join(plainOut, "b.public"))
			if err := os.WriteFile(filepath.Join(plainOut, "a.public"), pb, 0o644); err != nil {
				t.Fatal(err)
			}
			if code, o, e := verify("--circuit", plain, filepath.Join(plainOut, "a.proof")); code != 1 || strings.Contains(o+e, "hash-to-field") {
				t.Errorf("a circuit without commitments: exit %d, %s%s; want 1 and nothing of hash-to-field", code, o, e)
			}
			if code, _, e := verify("--vkey", "v.json", "--hash-to-field", "sha256", "p.json", "q.json"); code != 2 || !strings.Contains(e, "--hash-to-field is for --circuit's proofs") {
				t.Errorf("--vkey with --hash-to-field: exit %d, %s", code, e)
			}
		})
	}
}
