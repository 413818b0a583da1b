package commands

import (
	"bytes"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// circomTestdata is circomsrc's testdata directory, absolute.
func circomTestdata(t *testing.T) string {
	t.Helper()
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	return td
}

// snarkjsRun runs snarkjs args and returns its output; a failure fails the
// test.
func snarkjsRun(t *testing.T, args ...string) string {
	t.Helper()
	o, err := exec.Command(snarkjs(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("snarkjs %s: %v\n%s", strings.Join(args, " "), err, o)
	}
	return string(o)
}

// snarkjsAccepts is whether snarkjs groth16 verify says OK (true) or
// Invalid proof (false); anything else fails the test.
func snarkjsAccepts(t *testing.T, vkey, public, proof string) bool {
	t.Helper()
	o, err := exec.Command(snarkjs(t), "groth16", "verify", vkey, public, proof).CombinedOutput()
	switch s := string(o); {
	case err == nil && strings.Contains(s, "OK!"):
		return true
	case strings.Contains(s, "Invalid proof"):
		return false
	default:
		t.Fatalf("snarkjs groth16 verify %s %s: %v\n%s", public, proof, err, s)
		return false
	}
}

// makePtau makes a prepared powers of tau of 2^power on curve (snarkjs's
// name) in dir with snarkjs: new, one contribution (so τ is no longer 1),
// prepare phase2. It returns the prepared file and the one before
// preparing.
func makePtau(t *testing.T, dir, curve string, power int) (prepared, unprepared string) {
	t.Helper()
	p0, p1, p2 := filepath.Join(dir, curve+"-0.ptau"), filepath.Join(dir, curve+"-1.ptau"), filepath.Join(dir, curve+".ptau")
	snarkjsRun(t, "powersoftau", "new", curve, strconv.Itoa(power), p0)
	snarkjsRun(t, "powersoftau", "contribute", p0, p1, "--name=zkpipe test", "-e=zkpipe test "+curve)
	snarkjsRun(t, "powersoftau", "prepare", "phase2", p1, p2)
	return p2, p1
}

// setupCircomCase is a circom circuit of circomsrc's testdata.
type setupCircomCase struct {
	name, dir string // testdata/NAME.* in dir
	bn254     bool
}

func setupCircomCases(t *testing.T) []setupCircomCase {
	td := circomTestdata(t)
	return []setupCircomCase{
		{"mul", td, true}, {"arr", td, true}, {"nopub", td, true},
		{"blsmul", filepath.Join(td, "bls12381"), false},
	}
}

// zkpipe setup --r1cs --zkey makes a test key for circom's r1cs, on both
// curves, that snarkjs takes as its own: zkey export verificationkey
// reads it, zkpipe groth16 fullprove's proofs and snarkjs's own groth16
// fullprove's on it verify with snarkjs groth16 verify, a proof of other
// public inputs does not, and (BN254) zkey export solidityverifier
// exports its contract (evm/soltest runs one in the EVM). The test-key
// note is said; a second setup draws another key. A circuit without
// public inputs (nopub) is one of them.
func TestSetupCircomTestKeyIsSnarkjs(t *testing.T) {
	for _, c := range setupCircomCases(t) {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			r1cs := filepath.Join(c.dir, c.name+".r1cs")
			zkey, vkey := filepath.Join(root, "k.zkey"), filepath.Join(root, "vkey.json")
			cmd := exec.Command(binary(t), "setup", "--r1cs", r1cs, "--zkey", zkey, "--device", "cpu")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if code := exitCode(t, cmd); code != 0 {
				t.Fatalf("setup: exit %d\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), throwawayKeys) || !strings.Contains(stdout.String(), "a test key") {
				t.Errorf("setup said %q and %q, want the test-key note", stdout.String(), stderr.String())
			}
			snarkjsRun(t, "zkey", "export", "verificationkey", zkey, vkey)
			input, wasm := filepath.Join(c.dir, c.name+".input.json"), filepath.Join(c.dir, c.name+".wasm")
			zp, zpub := filepath.Join(root, "zkpipe.proof.json"), filepath.Join(root, "zkpipe.public.json")
			if code, stderr := runBin(t, "groth16", "fullprove", "--device", "cpu", input, wasm, zkey, zp, zpub); code != 0 {
				t.Fatalf("zkpipe groth16 fullprove: exit %d\n%s", code, stderr)
			}
			if !snarkjsAccepts(t, vkey, zpub, zp) {
				t.Error("snarkjs rejects zkpipe's proof from zkpipe's key")
			}
			sp, spub := filepath.Join(root, "snarkjs.proof.json"), filepath.Join(root, "snarkjs.public.json")
			snarkjsRun(t, "groth16", "fullprove", input, wasm, zkey, sp, spub)
			if !snarkjsAccepts(t, vkey, spub, sp) {
				t.Error("snarkjs rejects its own proof from zkpipe's key")
			}
			var pub []string
			if b, err := os.ReadFile(zpub); err != nil || json.Unmarshal(b, &pub) != nil {
				t.Fatalf("%s: %v %s", zpub, err, b)
			}
			if len(pub) > 0 {
				v, _ := new(big.Int).SetString(pub[0], 10)
				pub[0] = v.Add(v, big.NewInt(1)).String()
				b, _ := json.Marshal(pub)
				bad := filepath.Join(root, "bad.public.json")
				if err := os.WriteFile(bad, b, 0o644); err != nil {
					t.Fatal(err)
				}
				if snarkjsAccepts(t, vkey, bad, zp) {
					t.Error("snarkjs accepts the proof for other public inputs")
				}
			}
			if c.bn254 {
				sol := filepath.Join(root, "Verifier.sol")
				snarkjsRun(t, "zkey", "export", "solidityverifier", zkey, sol)
				if b, err := os.ReadFile(sol); err != nil || !bytes.Contains(b, []byte("contract Groth16Verifier")) {
					t.Errorf("zkey export solidityverifier: %v, %d bytes without the contract", err, len(b))
				}
			}
			zkey2, vkey2 := filepath.Join(root, "k2.zkey"), filepath.Join(root, "vkey2.json")
			if code, stderr := runBin(t, "setup", "--r1cs", r1cs, "--zkey", zkey2, "--device", "cpu"); code != 0 {
				t.Fatalf("second setup: exit %d\n%s", code, stderr)
			}
			snarkjsRun(t, "zkey", "export", "verificationkey", zkey2, vkey2)
			v1, _ := os.ReadFile(vkey)
			v2, _ := os.ReadFile(vkey2)
			if bytes.Equal(v1, v2) {
				t.Error("two setups wrote one key: the toxic waste is not fresh")
			}
			if snarkjsAccepts(t, vkey2, zpub, zp) {
				t.Error("the second key accepts the first key's proof")
			}
		})
	}
}

// zkpipe setup --r1cs --ptau writes the zkey snarkjs groth16 setup writes
// for the same r1cs and prepared powers of tau, byte for byte (its
// verifying key, coefficients, points and circuit hash), on both curves,
// and its proofs verify with snarkjs; no test-key note is said.
func TestSetupCircomPtauIsSnarkjsGroth16Setup(t *testing.T) {
	root := t.TempDir()
	ptaus := map[bool]string{}
	ptaus[true], _ = makePtau(t, root, "bn128", 8)
	ptaus[false], _ = makePtau(t, root, "bls12381", 7)
	for _, c := range setupCircomCases(t) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r1cs, ptau := filepath.Join(c.dir, c.name+".r1cs"), ptaus[c.bn254]
			want, got := filepath.Join(dir, "snarkjs.zkey"), filepath.Join(dir, "zkpipe.zkey")
			snarkjsRun(t, "groth16", "setup", r1cs, ptau, want)
			cmd := exec.Command(binary(t), "setup", "--r1cs", r1cs, "--ptau", ptau, "--zkey", got, "--device", "cpu")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if code := exitCode(t, cmd); code != 0 {
				t.Fatalf("setup --ptau: exit %d\n%s", code, stderr.String())
			}
			if strings.Contains(stderr.String(), throwawayKeys) {
				t.Errorf("setup --ptau says its key is a test key: %s", stderr.String())
			}
			a, _ := os.ReadFile(want)
			b, _ := os.ReadFile(got)
			if !bytes.Equal(a, b) {
				t.Fatalf("zkpipe's zkey (%d bytes) is not snarkjs groth16 setup's (%d bytes)", len(b), len(a))
			}
			vkey := filepath.Join(dir, "vkey.json")
			snarkjsRun(t, "zkey", "export", "verificationkey", want, vkey)
			input, wasm := filepath.Join(c.dir, c.name+".input.json"), filepath.Join(c.dir, c.name+".wasm")
			zp, zpub := filepath.Join(dir, "proof.json"), filepath.Join(dir, "public.json")
			if code, stderr := runBin(t, "groth16", "fullprove", "--device", "cpu", input, wasm, got, zp, zpub); code != 0 {
				t.Fatalf("zkpipe groth16 fullprove: exit %d\n%s", code, stderr)
			}
			if !snarkjsAccepts(t, vkey, zpub, zp) {
				t.Error("snarkjs rejects a proof from the key zkpipe derived from the ptau")
			}
			// a ceremony's next step: a contribution, which zkey verify
			// checks against the r1cs and the ptau (the circuit hash too)
			contributed := filepath.Join(dir, "contributed.zkey")
			snarkjsRun(t, "zkey", "contribute", got, contributed, "--name=zkpipe test", "-e=zkpipe test "+c.name)
			if o := snarkjsRun(t, "zkey", "verify", r1cs, ptau, contributed); !strings.Contains(o, "ZKey Ok!") {
				t.Errorf("snarkjs zkey verify of the contributed key: %s", o)
			}
		})
	}
}

// setup --r1cs refuses, with exit 2 (usage) or 1 and a message naming the
// problem, before writing anything: a --zkey that is an input, flags of a
// built-in's setup, a ptau too small for the circuit, of the other curve,
// not prepared for phase 2, or cut short; a built-in it does not know is
// refused before the test-key note.
func TestSetupCircomRefuses(t *testing.T) {
	td := circomTestdata(t)
	root := t.TempDir()
	mul, arr := filepath.Join(td, "mul.r1cs"), filepath.Join(td, "arr.r1cs")
	small, unprepared := makePtau(t, root, "bn128", 4) // arr needs 2^7
	bls, _ := makePtau(t, root, "bls12381", 3)
	r1csCopy := filepath.Join(root, "copy.r1cs")
	orig, err := os.ReadFile(mul)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r1csCopy, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link.zkey")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(root, "cut.ptau")
	sp, err := os.ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, sp[:len(sp)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out.zkey")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"zkey is the r1cs", []string{"--r1cs", r1csCopy, "--zkey", r1csCopy}, 1, "refusing to overwrite an input"},
		{"zkey is the ptau", []string{"--r1cs", mul, "--ptau", small, "--zkey", link}, 1, "refusing to overwrite an input"},
		{"no zkey", []string{"--r1cs", mul}, 2, "--r1cs and --zkey go together"},
		{"builtin too", []string{"--r1cs", mul, "--zkey", out, "--builtin", "bits"}, 2, "--builtin is for a built-in circuit's setup"},
		{"curve too", []string{"--r1cs", mul, "--zkey", out, "--curve", "bls12-381"}, 2, "--curve is for a built-in circuit's setup"},
		{"ptau too small", []string{"--r1cs", arr, "--ptau", small, "--zkey", out}, 1, "needs a domain of 128 (2^7), this powers of tau holds 2^4"},
		{"ptau of the other curve", []string{"--r1cs", mul, "--ptau", bls, "--zkey", out}, 1, "a bls12-381 powers of tau, for a bn254 circuit"},
		{"ptau not prepared", []string{"--r1cs", mul, "--ptau", unprepared, "--zkey", out}, 1, "prepare phase2"},
		{"ptau cut short", []string{"--r1cs", mul, "--ptau", cut, "--zkey", out}, 1, "cut.ptau"},
		{"r1cs is a ptau", []string{"--r1cs", small, "--zkey", out}, 1, "not a r1cs file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(binary(t), append([]string{"setup", "--device", "cpu"}, c.args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if code := exitCode(t, cmd); code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("exit %d, %q; want exit %d naming %q", code, stderr.String(), c.code, c.want)
			}
			if strings.Contains(stderr.String(), throwawayKeys) {
				t.Errorf("a refused setup says the test-key note: %s", stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("a refused setup wrote its --zkey")
			}
		})
	}
	// a variable of the built-ins' setup is not an argument: not refused
	cmd := exec.Command(binary(t), "setup", "--device", "cpu", "--r1cs", mul, "--zkey", out)
	cmd.Env = append(os.Environ(), "ZKPIPE_CURVE=bls12-381", "ZKPIPE_BUILTIN=bits")
	if code := exitCode(t, cmd); code != 0 {
		t.Errorf("setup --r1cs under ZKPIPE_CURVE and ZKPIPE_BUILTIN: exit %d", code)
	}
	if b, _ := os.ReadFile(r1csCopy); !bytes.Equal(b, orig) {
		t.Error("the --r1cs was written over")
	}
	if b, _ := os.ReadFile(small); !bytes.Equal(b, sp) {
		t.Error("the --ptau was written over")
	}
	cmd = exec.Command(binary(t), "setup", "--builtin", "nosuch", "--dir", filepath.Join(root, "d"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if code := exitCode(t, cmd); code != 2 || !strings.Contains(stderr.String(), "unknown built-in circuit") || strings.Contains(stderr.String(), throwawayKeys) {
		t.Errorf("setup --builtin nosuch: exit %d, %q; want 2, the unknown built-in and no test-key note", code, stderr.String())
	}
}
