package circomsrc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tests' circuits and keys are committed in testdata (NAME.circom with
// its NAME.r1cs, NAME.wasm, NAME.zkey and NAME.vkey.json), made by
// scripts/make-circom-testdata.sh; TestCommittedCircuitsMatchTheirSources
// checks that they are of one circuit. The tests still need circom2 and
// snarkjs from npm (witnesses and verification by snarkjs), found in
// $ZKPIPE_NODE_BIN (`export ZKPIPE_NODE_BIN="$(bash .ci/circom-tools.sh)"`).
// Without it they run that script themselves: they never skip.

var (
	toolsOnce sync.Once
	toolsDir  string
	toolsErr  error
)

// tools returns the directory holding circom2 and snarkjs.
func tools(t testing.TB) string {
	t.Helper()
	toolsOnce.Do(func() {
		if d := os.Getenv("ZKPIPE_NODE_BIN"); d != "" {
			toolsDir = d
			return
		}
		var out, errb bytes.Buffer
		cmd := exec.Command("bash", "../../.ci/circom-tools.sh")
		cmd.Stdout, cmd.Stderr = &out, &errb
		if toolsErr = cmd.Run(); toolsErr != nil {
			t.Logf("circom-tools.sh: %v: %s", toolsErr, errb.String())
		}
		toolsDir = strings.TrimSpace(out.String())
	})
	if toolsErr != nil || toolsDir == "" {
		t.Fatalf("no circom2/snarkjs: set ZKPIPE_NODE_BIN to the output of `bash .ci/circom-tools.sh` (npm must reach its registry)")
	}
	for _, b := range []string{"circom2", "snarkjs"} {
		if _, err := os.Stat(filepath.Join(toolsDir, b)); err != nil {
			t.Fatalf("ZKPIPE_NODE_BIN=%s: %v", toolsDir, err)
		}
	}
	return toolsDir
}

// run runs a tool from the tools directory in dir.
func run(t testing.TB, dir, tool string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(tools(t), tool), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// fixture is a compiled circom circuit with a snarkjs Groth16 key.
type fixture struct {
	name, dir        string
	zkey, wasm, vkey string
}

// circuit is testdata's circuit name: its files, as
// scripts/make-circom-testdata.sh made them (one contribution over a 2^8
// powers of tau, so δ is not the generator).
func circuit(t testing.TB, name string) *fixture {
	t.Helper()
	return circuitIn(t, "testdata", name)
}

// blsCircuit is testdata/bls12381's circuit name (BLS12-381's, made by
// scripts/make-circom-testdata-bls12381.sh).
func blsCircuit(t testing.TB, name string) *fixture {
	t.Helper()
	return circuitIn(t, "testdata/bls12381", name)
}

func circuitIn(t testing.TB, td, name string) *fixture {
	t.Helper()
	dir, err := filepath.Abs(td)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{name: name, dir: dir,
		zkey: filepath.Join(dir, name+".zkey"),
		wasm: filepath.Join(dir, name+".wasm"),
		vkey: filepath.Join(dir, name+".vkey.json")}
	for _, p := range []string{f.zkey, f.wasm, f.vkey, filepath.Join(dir, name+".r1cs")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("circuit %s: %v (scripts/make-circom-testdata.sh makes it)", name, err)
		}
	}
	return f
}

// wtns computes a witness with snarkjs (Node's witness calculator) into dir.
func (f *fixture) wtns(t testing.TB, dir, id, input string) string {
	t.Helper()
	in := filepath.Join(dir, id+".input.json")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, id+".wtns")
	run(t, dir, "snarkjs", "wtns", "calculate", f.wasm, in, out)
	return out
}

// snarkjsVerify runs `snarkjs groth16 verify`: true for "OK!", false for
// "Invalid proof"; anything else fails the test.
func snarkjsVerify(t testing.TB, vkey, public, proof string) bool {
	t.Helper()
	cmd := exec.Command(filepath.Join(tools(t), "snarkjs"), "groth16", "verify", vkey, public, proof)
	out, err := cmd.CombinedOutput()
	switch s := string(out); {
	case err == nil && strings.Contains(s, "OK!"):
		return true
	case strings.Contains(s, "Invalid proof"):
		return false
	default:
		t.Fatalf("snarkjs groth16 verify %s %s: %v\n%s", public, proof, err, s)
		return false
	}
}
