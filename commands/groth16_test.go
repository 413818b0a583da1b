package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

var snarkjsOnce = sync.OnceValues(func() (string, error) {
	if d := os.Getenv("ZKPIPE_NODE_BIN"); d != "" {
		return filepath.Join(d, "snarkjs"), nil
	}
	out, err := exec.Command("bash", "../.ci/circom-tools.sh").Output()
	return filepath.Join(strings.TrimSpace(string(out)), "snarkjs"), err
})

// snarkjs is snarkjs's path: $ZKPIPE_NODE_BIN, else .ci/circom-tools.sh
// installs it (npm must reach its registry); the tests never skip it.
func snarkjs(t *testing.T) string {
	t.Helper()
	p, err := snarkjsOnce()
	if err != nil {
		t.Fatalf("no snarkjs (set ZKPIPE_NODE_BIN to the output of .ci/circom-tools.sh): %v", err)
	}
	return p
}

// run runs the binary; it returns the exit code and stderr.
func runBin(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return exitCode(t, cmd), stderr.String()
}

// jsonShape is a JSON value with every string replaced by "s": what
// snarkjs's files and zkpipe's must share.
func jsonShape(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var shape func(any) any
	shape = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k := range x {
				x[k] = shape(x[k])
			}
		case []any:
			for i := range x {
				x[i] = shape(x[i])
			}
		case string:
			if k := x; k == "groth16" || k == "bn128" || k == "bls12381" {
				return k
			}
			return "s"
		}
		return v
	}
	return shape(v)
}

// TestGroth16SnarkjsShaped: zkpipe groth16 prove ZKEY WTNS PROOF PUBLIC and
// zkpipe groth16 fullprove INPUT WASM ZKEY PROOF PUBLIC take snarkjs's
// arguments and write its files: snarkjs groth16 verify accepts them, their
// JSON has the shape of snarkjs's own for the same files, and public.json
// is snarkjs's byte for byte; for a BN254 circuit ("curve": "bn128") and a
// BLS12-381 one ("bls12381", circom --prime bls12381).
func TestGroth16SnarkjsShaped(t *testing.T) {
	for _, base := range []string{"../source/circomsrc/testdata/mul", "../source/circomsrc/testdata/bls12381/blsmul"} {
		t.Run(filepath.Base(base), func(t *testing.T) { checkSnarkjsShaped(t, base) })
	}
}

func checkSnarkjsShaped(t *testing.T, base string) {
	base, err := filepath.Abs(base)
	if err != nil {
		t.Fatal(err)
	}
	zkey, wtns, wasm, vkey := base+".zkey", base+".wtns", base+".wasm", base+".vkey.json"
	root := t.TempDir()
	input := filepath.Join(root, "input.json")
	if err := os.WriteFile(input, []byte(`{"a":"5","b":"6"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "sub") // outputs in two directories
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		zk   []string // zkpipe's arguments, less the outputs
		sj   []string // snarkjs's
	}{
		{"prove", []string{"groth16", "prove", zkey, wtns}, []string{"groth16", "prove", zkey, wtns}},
		{"fullprove", []string{"groth16", "fullprove", input, wasm, zkey}, []string{"groth16", "fullprove", input, wasm, zkey}},
	} {
		t.Run(c.name, func(t *testing.T) {
			proof, public := filepath.Join(root, c.name+".proof.json"), filepath.Join(sub, c.name+".public.json")
			if code, stderr := runBin(t, append(append(c.zk[:2:2], "--device", "cpu"), append(c.zk[2:], proof, public)...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if o, err := exec.Command(snarkjs(t), "groth16", "verify", vkey, public, proof).CombinedOutput(); err != nil || !strings.Contains(string(o), "OK!") {
				t.Fatalf("snarkjs groth16 verify rejects zkpipe's files: %v\n%s", err, o)
			}
			sp, spub := filepath.Join(root, "snarkjs."+c.name+".proof.json"), filepath.Join(root, "snarkjs."+c.name+".public.json")
			if o, err := exec.Command(snarkjs(t), append(c.sj, sp, spub)...).CombinedOutput(); err != nil {
				t.Fatalf("snarkjs %s: %v\n%s", c.name, err, o)
			}
			if a, b := jsonShape(t, proof), jsonShape(t, sp); !reflect.DeepEqual(a, b) {
				t.Errorf("proof.json: zkpipe's shape %v, snarkjs's %v", a, b)
			}
			var zp, sjp []string
			for p, v := range map[string]*[]string{public: &zp, spub: &sjp} {
				b, _ := os.ReadFile(p)
				if err := json.Unmarshal(b, v); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
			}
			if !reflect.DeepEqual(zp, sjp) {
				t.Errorf("public.json: zkpipe's %v, snarkjs's %v", zp, sjp)
			}
			if code, stderr := runBin(t, "verify", "--vkey", vkey, proof, public); code != 0 {
				t.Errorf("zkpipe verify --vkey rejects zkpipe's files: exit %d: %s", code, stderr)
			}
			if code, stderr := runBin(t, "verify", "--vkey", vkey, sp, spub); code != 0 {
				t.Errorf("zkpipe verify --vkey rejects snarkjs's files: exit %d: %s", code, stderr)
			}
		})
	}
}

// TestGroth16Refuses: a bad witness, bad inputs, a wrong number of
// arguments, outputs that would overwrite an input (by name or through a
// link): each exits non-zero with a message saying why, and leaves the
// outputs as they were.
func TestGroth16Refuses(t *testing.T) {
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	zkey, wasm := filepath.Join(td, "mul.zkey"), filepath.Join(td, "mul.wasm")
	blsZkey := filepath.Join(td, "bls12381", "blsmul.zkey")
	root := t.TempDir()
	proof, public := filepath.Join(root, "proof.json"), filepath.Join(root, "public.json")
	for _, p := range []string{proof, public} {
		if err := os.WriteFile(p, []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zero, notJSON := filepath.Join(root, "zero.json"), filepath.Join(root, "bad.json")
	os.WriteFile(zero, []byte(`{"a":"0","b":"2"}`), 0o644) // mul.circom rejects a = 0
	os.WriteFile(notJSON, []byte(`{"a":`), 0o644)
	zkeyCopy := filepath.Join(root, "copy.zkey")
	data, err := os.ReadFile(zkey)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(zkeyCopy, data, 0o644)
	link := filepath.Join(root, "link.json")
	if err := os.Symlink(zkeyCopy, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(root, "hard.json")
	if err := os.Link(zkeyCopy, hard); err != nil {
		t.Fatal(err)
	}
	proofLink := filepath.Join(root, "proof-link.json")
	if err := os.Link(proof, proofLink); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "a-directory")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unsatisfied inputs", []string{"groth16", "fullprove", zero, wasm, zkey, proof, public}, ExitRunFailed, "assert failed"},
		{"BN254 witness, BLS12-381 zkey", []string{"groth16", "prove", blsZkey, filepath.Join(td, "mul.wtns"), proof, public}, ExitRunFailed, "is a bn254 witness (its prime is bn254's r), circuit blsmul is bls12-381's"},
		{"BLS12-381 witness, BN254 zkey", []string{"groth16", "prove", zkey, filepath.Join(td, "bls12381", "blsmul.wtns"), proof, public}, ExitRunFailed, "is a bls12-381 witness (its prime is bls12-381's r), circuit mul is bn254's"},
		{"BN254 wasm, BLS12-381 zkey", []string{"groth16", "fullprove", zero, wasm, blsZkey, proof, public}, ExitRunFailed, "the wasm computes a bn254 witness (its prime is bn254's r), the zkey is bls12-381's"},
		{"input not JSON", []string{"groth16", "fullprove", notJSON, wasm, zkey, proof, public}, ExitRunFailed, "not JSON"},
		{"not a wtns", []string{"groth16", "prove", zkey, filepath.Join(td, "mul.vkey.json"), proof, public}, ExitRunFailed, "not a wtns file"},
		{"no such zkey", []string{"groth16", "prove", filepath.Join(root, "none.zkey"), filepath.Join(td, "mul.wtns"), proof, public}, ExitRunFailed, "none.zkey"},
		{"three arguments", []string{"groth16", "prove", zkey, filepath.Join(td, "mul.wtns"), proof}, ExitUsage, "usage: zkpipe groth16 prove"},
		{"six arguments", []string{"groth16", "fullprove", zero, wasm, zkey, proof, public, "x"}, ExitUsage, "usage: zkpipe groth16 fullprove"},
		{"proof over the zkey", []string{"groth16", "prove", zkeyCopy, filepath.Join(td, "mul.wtns"), zkeyCopy, public}, ExitRunFailed, "refusing to overwrite an input"},
		{"proof over a symlink to the zkey", []string{"groth16", "prove", zkeyCopy, filepath.Join(td, "mul.wtns"), link, public}, ExitRunFailed, "refusing to overwrite an input"},
		{"public over a hard link to the zkey", []string{"groth16", "prove", zkeyCopy, filepath.Join(td, "mul.wtns"), proof, hard}, ExitRunFailed, "refusing to overwrite an input"},
		{"proof and public one file", []string{"groth16", "prove", zkey, filepath.Join(td, "mul.wtns"), proof, proof}, ExitRunFailed, "are one file"},
		{"proof and public one file by a hard link", []string{"groth16", "prove", zkey, filepath.Join(td, "mul.wtns"), proof, proofLink}, ExitRunFailed, "are one file"},
		{"proof path a directory", []string{"groth16", "prove", zkey, filepath.Join(td, "mul.wtns"), dir, public}, ExitRunFailed, "is a directory"},
		{"public path a directory", []string{"groth16", "fullprove", filepath.Join(td, "mul.input.json"), wasm, zkey, proof, dir}, ExitRunFailed, "is a directory"},
		{"proof in a directory that is not there", []string{"groth16", "prove", zkey, filepath.Join(td, "mul.wtns"), filepath.Join(root, "none", "proof.json"), public}, ExitRunFailed, "no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args[:2:2], append([]string{"--device", "cpu"}, c.args[2:]...)...)
			code, stderr := runBin(t, args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, want %d; stderr %q, want %q", code, c.code, stderr, c.want)
			}
			for _, p := range []string{proof, public} {
				if b, _ := os.ReadFile(p); string(b) != "earlier" {
					t.Errorf("%s changed: %.40q", p, b)
				}
			}
			if b, _ := os.ReadFile(zkeyCopy); !bytes.Equal(b, data) {
				t.Fatal("the zkey was overwritten")
			}
			if in, _ := os.ReadDir(dir); len(in) > 0 {
				t.Errorf("written into the directory given as an output: %v", in)
			}
			if left, _ := filepath.Glob(filepath.Join(root, ".zkpipe-*")); len(left) > 0 {
				t.Errorf("scratch left behind: %v", left)
			}
		})
	}
}
