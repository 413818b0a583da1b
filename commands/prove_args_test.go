package commands

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProveRefusesPositionalArgs: rapidsnark's and snarkjs's argument
// orders given to zkpipe prove (which reads jobs from --jobs) exit 2 with
// the usage line and a pointer to zkpipe groth16 prove, before reading a
// job (the old prove ignored them, read stdin, and exited 0).
func TestProveRefusesPositionalArgs(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	for _, args := range [][]string{
		{"prove", "--zkey", "z.zkey", "w.wtns", "proof.json", "public.json"},
		{"prove", "z.zkey", "w.wtns", "proof.json", "public.json"},
		{"prove", "--circuit", chain, "--out", filepath.Join(root, "out"), "jobs.jsonl"},
		{"prove", "--device", "cpu", "--circuit", chain, "--jobs", "-", "--out", filepath.Join(root, "out"), "--", "x"},
		{"export", "solidity", "--circuit", chain, "extra"},
	} {
		cmd := exec.Command(binary(t), args...)
		// stdin is empty: the old prove read it, proved nothing and exited 0
		if args[1] != "--zkey" {
			cmd.Stdin = strings.NewReader("")
		} else {
			// held open: a prove that read it before refusing would wait
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := exitCode(t, cmd)
		if code != ExitUsage || !strings.Contains(stderr.String(), "usage: zkpipe ") || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit %d and a usage line", args, code, stderr.String(), stdout.String(), ExitUsage)
		}
		if args[0] == "prove" && !strings.Contains(stderr.String(), "zkpipe groth16 prove ZKEY WTNS") {
			t.Errorf("%q: stderr %q does not point to zkpipe groth16 prove", args, stderr.String())
		}
	}
}
