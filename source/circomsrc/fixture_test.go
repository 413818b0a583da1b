package circomsrc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tests make their circuits and keys with circom2 and snarkjs from npm,
// found in $ZKPIPE_NODE_BIN (`export ZKPIPE_NODE_BIN="$(bash .ci/circom-tools.sh)"`).
// Without it they run that script themselves: they never skip. Keys are
// cached in $ZKPIPE_CIRCOM_CACHE, by default the repository's git-ignored
// .cache/circomsrc, keyed by the circuit's source and the tools' path.

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

func cacheDir(t testing.TB) string {
	t.Helper()
	d := os.Getenv("ZKPIPE_CIRCOM_CACHE")
	if d == "" {
		abs, err := filepath.Abs("../../.cache/circomsrc")
		if err != nil {
			t.Fatal(err)
		}
		d = abs
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// cached builds dir under the cache with make, once: make works in a fresh
// directory that is renamed into place when it returns.
func cached(t testing.TB, key string, make func(dir string)) string {
	t.Helper()
	final := filepath.Join(cacheDir(t), key)
	if _, err := os.Stat(final); err == nil {
		return final
	}
	tmp, err := os.MkdirTemp(cacheDir(t), "."+key+".tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	make(tmp)
	if err := os.Rename(tmp, final); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(final); statErr != nil { // not a concurrent winner
			t.Fatal(err)
		}
	}
	return final
}

func hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ptau returns a prepared powers-of-tau file of 2^power.
func ptau(t testing.TB, power string) string {
	t.Helper()
	dir := cached(t, "ptau-"+power+"-"+hash(tools(t)), func(dir string) {
		run(t, dir, "snarkjs", "powersoftau", "new", "bn128", power, "p0.ptau")
		run(t, dir, "snarkjs", "powersoftau", "contribute", "p0.ptau", "p1.ptau", "--name=zkpipe test", "-e=zkpipe test entropy")
		run(t, dir, "snarkjs", "powersoftau", "prepare", "phase2", "p1.ptau", "final.ptau")
		os.Remove(filepath.Join(dir, "p0.ptau"))
		os.Remove(filepath.Join(dir, "p1.ptau"))
	})
	return filepath.Join(dir, "final.ptau")
}

// fixture is a compiled circom circuit with a snarkjs Groth16 key.
type fixture struct {
	name, dir        string
	zkey, wasm, vkey string
}

// circuit compiles src with circom2 and sets it up with snarkjs (one
// contribution, so δ is not the generator) over a 2^8 powers of tau.
func circuit(t testing.TB, name, src string) *fixture {
	t.Helper()
	pt := ptau(t, "8")
	dir := cached(t, name+"-"+hash(src, tools(t), pt), func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, name+".circom"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "circom2", name+".circom", "--r1cs", "--wasm", "-o", ".")
		run(t, dir, "snarkjs", "groth16", "setup", name+".r1cs", pt, "k0.zkey")
		run(t, dir, "snarkjs", "zkey", "contribute", "k0.zkey", name+".zkey", "--name=zkpipe test", "-e=zkpipe key entropy")
		run(t, dir, "snarkjs", "zkey", "export", "verificationkey", name+".zkey", "verification_key.json")
		os.Remove(filepath.Join(dir, "k0.zkey"))
	})
	return &fixture{name: name, dir: dir,
		zkey: filepath.Join(dir, name+".zkey"),
		wasm: filepath.Join(dir, name+"_js", name+".wasm"),
		vkey: filepath.Join(dir, "verification_key.json")}
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

// The test circuits.
const (
	// mul: 21 multiplications; a is public, c an output; a = 0 is rejected
	// (its inverse does not exist), by an assert in the witness calculator.
	mulSrc = `pragma circom 2.0.0;
template Mul(N) {
    signal input a;
    signal input b;
    signal output c;
    signal x[N];
    signal inv;
    x[0] <== a * b;
    for (var i = 1; i < N; i++) { x[i] <== x[i-1] * a; }
    c <== x[N-1];
    inv <-- 1 / a;
    inv * a === 1;
}
component main {public [a]} = Mul(20);
`
	// mul2 has mul's wires and public inputs but other constraints: its
	// witnesses fit mul's size and do not satisfy it.
	mul2Src = `pragma circom 2.0.0;
template Mul(N) {
    signal input a;
    signal input b;
    signal output c;
    signal x[N];
    signal inv;
    x[0] <== a * b + 1;
    for (var i = 1; i < N; i++) { x[i] <== x[i-1] * a; }
    c <== x[N-1];
    inv <-- 1 / a;
    inv * a === 1;
}
component main {public [a]} = Mul(20);
`
	// nopub: no public inputs or outputs (public.json is [], IC one point).
	nopubSrc = `pragma circom 2.0.0;
template Sq() {
    signal input a;
    signal input b;
    signal x;
    signal y;
    x <== a * b;
    y <== x * x;
}
component main = Sq();
`
	// arr: array inputs, a chain of squarings (about 110 constraints).
	arrSrc = `pragma circom 2.0.0;
template Arr(N) {
    signal input xs[3];
    signal input m[2][2];
    signal output y;
    signal t[4];
    signal acc[N];
    t[0] <== xs[0] * xs[1];
    t[1] <== t[0] * xs[2];
    t[2] <== m[0][0] * m[1][1];
    t[3] <== m[0][1] * m[1][0];
    acc[0] <== t[1] + t[2] - t[3];
    for (var i = 1; i < N; i++) { acc[i] <== acc[i-1] * acc[i-1] + i; }
    y <== acc[N-1];
}
component main = Arr(100);
`
)
