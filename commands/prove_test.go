package commands

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// runProve runs the zkpipe command with args, which write result lines to
// results, and returns those lines. A run whose jobs failed is not an error
// here: the tests read the failures from the result lines.
func runProve(t *testing.T, results string, args ...string) []stream.Result {
	t.Helper()
	return runProveTo(t, nil, results, args...)
}

// runProveTo is runProve with the status lines and warnings sent to log.
func runProveTo(t *testing.T, log io.Writer, results string, args ...string) []stream.Result {
	t.Helper()
	app := App()
	app.ErrWriter = log
	var jobsFailed *JobsFailedError
	if err := app.Run(args); err != nil && !errors.As(err, &jobsFailed) {
		t.Fatalf("%s: %v", args[1], err)
	}
	lines, err := stream.ReadResultsFile(results)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// setupCircuit makes a built-in circuit directory named name.
func setupCircuit(t *testing.T, root, name, builtin string, n int) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if _, err := gnarksrc.Setup(builtin, n, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeWitness(t *testing.T, path string, assignment frontend.Circuit) []byte {
	t.Helper()
	w, err := frontend.NewWitness(assignment, ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// One run over a stream that mixes good and bad jobs: each bad job gets a
// clear error line, each good one a proof gnark accepts, and nothing stops.
func TestMixedStreamProvesTheGoodAndNamesTheBad(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 200)
	bitsDir := setupCircuit(t, root, "bits", "bits", 300)
	out := filepath.Join(root, "out")

	mc, _ := circuits.Lookup("mulchain")
	good := writeWitness(t, filepath.Join(root, "good.wit"), mc.Assignment(200, 1))
	if err := os.WriteFile(filepath.Join(root, "truncated.wit"), good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	bad := mc.Assignment(200, 2).(*circuits.MulChain)
	bad.Y = new(big.Int).Add(bad.Y.(*big.Int), big.NewInt(1))
	writeWitness(t, filepath.Join(root, "unsat.wit"), bad)
	bc, _ := circuits.Lookup("bits")
	writeWitness(t, filepath.Join(root, "bits-for-chain.wit"), bc.Assignment(300, 1))

	w := func(name string) string { return filepath.Join(root, name) }
	jobs := strings.Join([]string{
		fmt.Sprintf(`{"id":"ok-file","circuit":"chain","witness":%q}`, w("good.wit")),
		`{"id":"ok-gen","circuit":"bits","generate":{"seed":3}}`,
		`{"id":"malformed","circuit":"chain",`,
		`{"id":"unknown","circuit":"nope","generate":{"seed":1}}`,
		fmt.Sprintf(`{"id":"missing","circuit":"chain","witness":%q}`, w("no-such.wit")),
		fmt.Sprintf(`{"id":"truncated","circuit":"chain","witness":%q}`, w("truncated.wit")),
		fmt.Sprintf(`{"id":"wrongsize","circuit":"chain","witness":%q}`, w("bits-for-chain.wit")),
		fmt.Sprintf(`{"id":"unsat","circuit":"chain","witness":%q}`, w("unsat.wit")),
		`{"id":"ok-gen","circuit":"chain","generate":{"seed":4}}`,
		`{"id":"ok-gen2","circuit":"chain","generate":{"seed":5}}`,
		`{"id":"../escape","circuit":"chain","generate":{"seed":6}}`,
	}, "\n") + "\n"
	jobsFile := w("jobs.jsonl")
	if err := os.WriteFile(jobsFile, []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	results := w("results.jsonl")
	args := []string{"zkpipe", "prove", "--device", "cpu", "--circuit", chain, "--circuit", bitsDir,
		"--jobs", jobsFile, "--out", out, "--results", results, "--synthesize-workers", "2", "--msm-h-workers", "2"}
	lines := runProve(t, results, args...)
	if len(lines) != 11 {
		t.Fatalf("%d result lines for 11 jobs", len(lines))
	}
	wantErr := map[string]string{
		"#line-3":   "malformed job",
		"unknown":   `unknown circuit "nope"`,
		"missing":   "no such file",
		"truncated": "truncated",
		"wrongsize": "not a witness of circuit chain: its header does not give the 1 public and 1 secret values",
		"unsat":     "unsatisfied witness",
		"ok-gen":    "duplicate id", // the second ok-gen
		"#line-11":  "invalid id",
	}
	vks := map[string]string{"chain": chain, "bits": bitsDir}
	proved := map[string]bool{}
	for _, l := range lines {
		if l.Error == "" {
			vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(vks[l.Circuit], gnarksrc.VKFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
				t.Errorf("job %s: gnark rejects the proof: %v", l.ID, err)
			}
			proved[l.ID] = true
			continue
		}
		want, ok := wantErr[l.ID]
		if !ok {
			t.Errorf("job %s failed unexpectedly: %s", l.ID, l.Error)
			continue
		}
		if !strings.Contains(l.Error, want) || !strings.Contains(l.Error, l.ID) && !strings.HasPrefix(l.ID, "#line-") {
			t.Errorf("job %s: error %q should name the job and say %q", l.ID, l.Error, want)
		}
		if _, err := os.Stat(filepath.Join(out, l.ID+".proof")); err == nil && l.ID != "ok-gen" {
			t.Errorf("failed job %s left a proof file", l.ID)
		}
	}
	for _, id := range []string{"ok-file", "ok-gen", "ok-gen2"} {
		if !proved[id] {
			t.Errorf("good job %s was not proven", id)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "unsat.proof")); err == nil {
		t.Error("an unsatisfied witness produced a proof file")
	}
}
