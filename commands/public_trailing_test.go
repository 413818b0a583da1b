package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/curve"
)

// zkpipe verify refuses a .public with bytes after its values for a
// circuit with commitments as for one without, on both curves: a byte, a
// word, a whole value more (the commitment's slot gnark counts in its
// NbPublicWitness) are each refused, naming the file; the file as written
// is accepted. Before, a commitment circuit's .public took up to 32 bytes
// more per commitment unnoticed.
func TestVerifyRefusesPublicWithTrailingBytes(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		id      curve.ID
		builtin string
	}{{curve.BN254, "commit"}, {curve.BLS12_381, "commit"}, {curve.BN254, "mulchain"}} {
		dir := filepath.Join(root, c.builtin+"-"+c.id.String())
		if err := App().Run([]string{"zkpipe", "setup", "--builtin", c.builtin, "--constraints", "64", "--dir", dir, "--curve", c.id.String()}); err != nil {
			t.Fatal(err)
		}
		jobs := filepath.Join(dir, "jobs.jsonl")
		writeJobs(t, jobs, `{"id":"p","generate":{"seed":5}}`)
		out, results := filepath.Join(dir, "out"), filepath.Join(dir, "r.jsonl")
		lines := runProve(t, results, "zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobs, "--out", out, "--results", results, "--mem-status", "0")
		if len(lines) != 1 || lines[0].Error != "" {
			t.Fatalf("%s: %+v", dir, lines)
		}
		proof, public := filepath.Join(out, "p.proof"), filepath.Join(out, "p.public")
		good, err := os.ReadFile(public)
		if err != nil {
			t.Fatal(err)
		}
		if err := App().Run([]string{"zkpipe", "verify", "--circuit", dir, proof}); err != nil {
			t.Fatalf("%s: the proof as written: %v", dir, err)
		}
		for _, extra := range []int{1, 8, 32} {
			if err := os.WriteFile(public, append(append([]byte(nil), good...), make([]byte, extra)...), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary(t), "verify", "--circuit", dir, proof)
			var stdout strings.Builder
			cmd.Stdout = &stdout
			code := exitCode(t, cmd)
			if code == 0 || !strings.Contains(stdout.String(), "REJECTED") || !strings.Contains(stdout.String(), public) {
				t.Errorf("%s on %s: a .public with %d bytes after its values: exit %d, %q; want it rejected naming the file", c.builtin, c.id, extra, code, stdout.String())
			}
		}
	}
}
