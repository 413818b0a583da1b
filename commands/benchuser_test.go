package commands

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// cubic is a user's circuit, not one of zkpipe's: x³ + x + 5 = y, y public.
type cubic struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *cubic) Define(api frontend.API) error {
	x3 := api.Mul(c.X, c.X, c.X)
	api.AssertIsEqual(c.Y, api.Add(x3, c.X, 5))
	return nil
}

// gnarkUserCircuit writes cubic's circuit directory as a gnark user would,
// with gnark's own groth16.Setup, keys compressed (WriteTo) or raw
// (WriteRawTo), and returns it with its verifying key.
func gnarkUserCircuit(t *testing.T, dir string, raw bool) groth16.VerifyingKey {
	t.Helper()
	return gnarkUserCircuitOf(t, dir, raw, &cubic{})
}

func gnarkUserCircuitOf(t *testing.T, dir string, raw bool, circuit frontend.Circuit) groth16.VerifyingKey {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, circuit)
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]func(*bytes.Buffer) error{
		"circuit.r1cs": func(b *bytes.Buffer) error { _, err := ccs.WriteTo(b); return err },
		"circuit.pk": func(b *bytes.Buffer) error {
			if raw {
				_, err := pk.WriteRawTo(b)
				return err
			}
			_, err := pk.WriteTo(b)
			return err
		},
		"circuit.vk": func(b *bytes.Buffer) error {
			if raw {
				_, err := vk.WriteRawTo(b)
				return err
			}
			_, err := vk.WriteTo(b)
			return err
		},
	}
	for name, enc := range files {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return vk
}

// cubicWitness writes a full witness of cubic for x (y given: a wrong one
// makes a witness that fits the circuit's shape but not its constraints).
func cubicWitness(t *testing.T, path string, x, y int) {
	t.Helper()
	writeWitness(t, path, &cubic{X: x, Y: y})
}

func cube(x int) int { return x*x*x + x + 5 }

// committedCubic is cubic with a BSB22 commitment (api.Commit), as gnark's
// std range checks add: the proof carries a commitment and its proof of
// knowledge, which gnark's prover and zkpipe's must both get right.
type committedCubic struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *committedCubic) Define(api frontend.API) error {
	x3 := api.Mul(c.X, c.X, c.X)
	api.AssertIsEqual(c.Y, api.Add(x3, c.X, 5))
	ch, err := api.(frontend.Committer).Commit(c.X, x3)
	if err != nil {
		return err
	}
	api.AssertIsDifferent(ch, 0)
	return nil
}

// benchBin runs the zkpipe binary's bench; it returns the exit code and
// the combined output.
func benchBin(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"bench", "--device", "cpu", "--mem-status", "0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return exitCode(t, cmd), out.String()
}

// A user's gnark circuit (keys from gnark's own Setup, compressed and raw)
// is benched on the user's witness files, given as a directory, a glob and
// a file (a symlink and a hard link to one of them count once), cycled to
// -n: zkpipe against gnark's groth16.Prove, exit 0, and every proof zkpipe
// wrote is accepted by gnark's groth16.Verify here.
func TestBenchUserGnarkCircuit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		raw       bool
		committed bool
	}{{"compressed", false, false}, {"raw", true, false}, {"commitment", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "cubic")
			wit := func(path string, x int) { cubicWitness(t, path, x, cube(x)) }
			var vk groth16.VerifyingKey
			if tc.committed {
				vk = gnarkUserCircuitOf(t, dir, tc.raw, &committedCubic{})
				wit = func(path string, x int) { writeWitness(t, path, &committedCubic{X: x, Y: cube(x)}) }
			} else {
				vk = gnarkUserCircuit(t, dir, tc.raw)
			}
			wdir := filepath.Join(root, "wits")
			os.MkdirAll(wdir, 0o755)
			wit(filepath.Join(wdir, "a.wit"), 3)
			wit(filepath.Join(wdir, "b.wit"), 4)
			wit(filepath.Join(root, "c.wit"), 5)
			if err := os.Symlink(filepath.Join(wdir, "a.wit"), filepath.Join(root, "link.wit")); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(filepath.Join(wdir, "b.wit"), filepath.Join(root, "hard.wit")); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(root, "out")
			code, output := benchBin(t, nil, "--circuit", dir, "--witness", wdir, "--witness", filepath.Join(root, "*.wit"), "-n", "7", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, output)
			}
			for _, want := range []string{"7 proofs of 3 witnesses", "gnark groth16.Prove: 7 proofs", "zkpipe stream:       7 proofs", "all verified by gnark", "ratio zkpipe/gnark"} {
				if !strings.Contains(output, want) {
					t.Errorf("output lacks %q:\n%s", want, output)
				}
			}
			proofs, _ := filepath.Glob(filepath.Join(out, "*.proof"))
			if len(proofs) != 7 {
				t.Fatalf("%d proofs in --out, want 7", len(proofs))
			}
			for _, p := range proofs {
				proof := groth16.NewProof(ecc.BN254)
				pub, _ := witness.New(ecc.BN254.ScalarField())
				pb, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				wb, err := os.ReadFile(strings.TrimSuffix(p, ".proof") + ".public")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := proof.ReadFrom(bytes.NewReader(pb)); err != nil {
					t.Fatal(err)
				}
				if err := pub.UnmarshalBinary(wb); err != nil {
					t.Fatal(err)
				}
				if err := groth16.Verify(proof, vk, pub); err != nil {
					t.Errorf("gnark rejects %s: %v", p, err)
				}
			}
		})
	}
}

// The errors of a user's gnark bench say what to do: no witnesses names
// --witness; a witness of another circuit, or one that fits the shape but
// not the constraints, is named by its file, with or without gnark's side.
func TestBenchUserGnarkCircuitErrors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cubic")
	gnarkUserCircuit(t, dir, false)
	good, wrong, other := filepath.Join(root, "good.wit"), filepath.Join(root, "wrong.wit"), filepath.Join(root, "other.wit")
	cubicWitness(t, good, 2, cube(2))
	cubicWitness(t, wrong, 2, cube(2)+1)
	writeWitness(t, other, &struct {
		cubic
		Z frontend.Variable
	}{cubic{X: 1, Y: 7}, 9})
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--circuit", dir}, []string{"give them with --witness FILE"}},
		{[]string{"--circuit", dir, "--witness", good, "--witness", other}, []string{other, "not a witness of circuit cubic"}},
		{[]string{"--circuit", dir, "--witness", good, "--witness", wrong}, []string{wrong, "gnark groth16.Prove"}},
		{[]string{"--circuit", dir, "--witness", good, "--witness", wrong, "--skip-gnark"}, []string{"witness " + wrong + ": zkpipe job b"}},
		{[]string{"--circuit", dir, "--witness", filepath.Join(root, "*.none")}, []string{"no file matches"}},
		{[]string{"--circuit", dir, "--witness", filepath.Join(root, "absent.wit")}, []string{"absent.wit", "no such file"}},
		// an output that is a witness a glob or a directory names is refused
		{[]string{"--circuit", dir, "--witness", filepath.Join(root, "g*.wit"), "--results", good}, []string{"refusing to overwrite an input"}},
		{[]string{"--circuit", dir, "--witness", root, "--results", wrong}, []string{"refusing to overwrite an input"}},
	}
	for _, c := range cases {
		code, output := benchBin(t, nil, append(c.args, "-n", "2")...)
		if code == 0 {
			t.Errorf("%v: exit 0:\n%s", c.args, output)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(output, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, output)
			}
		}
	}
}

// A circom bench from source/circomsrc/testdata (mul.circom): a .wtns and
// an input file for the wasm, cycled to -n. With snarkjs (ZKPIPE_NODE_BIN)
// the output says snarkjs groth16 prove was the comparison and snarkjs
// verified zkpipe's first proof; without it, that there was none. Every
// proof zkpipe wrote is accepted by snarkjs groth16 verify here.
func TestBenchCircom(t *testing.T) {
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	sj := snarkjs(t)
	root := t.TempDir()
	input := filepath.Join(root, "in.json")
	if err := os.WriteFile(input, []byte(`{"a":"7","b":"2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--zkey", filepath.Join(td, "mul.zkey"), "--wtns", filepath.Join(td, "mul.wtns"), "--wasm", filepath.Join(td, "mul.wasm"), "--input", input, "-n", "5"}

	out := filepath.Join(root, "out")
	code, output := benchBin(t, []string{"ZKPIPE_NODE_BIN=" + filepath.Dir(sj)}, append(args, "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, output)
	}
	for _, want := range []string{"5 proofs of 2 witnesses", "comparison: snarkjs groth16 prove", "zkpipe stream:       5 proofs", "the first by snarkjs groth16 verify", "ratio zkpipe/snarkjs"} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}
	proofs, _ := filepath.Glob(filepath.Join(out, "b*.proof.json"))
	if len(proofs) != 5 {
		t.Fatalf("%d proofs in --out, want 5", len(proofs))
	}
	for _, p := range proofs {
		pub := strings.TrimSuffix(p, ".proof.json") + ".public.json"
		if o, err := exec.Command(sj, "groth16", "verify", filepath.Join(td, "mul.vkey.json"), pub, p).CombinedOutput(); err != nil || !strings.Contains(string(o), "OK!") {
			t.Errorf("snarkjs rejects %s: %v\n%s", p, err, o)
		}
	}

	// input first: the comparison is snarkjs's fullprove of it
	code, output = benchBin(t, []string{"ZKPIPE_NODE_BIN=" + filepath.Dir(sj)}, "--zkey", filepath.Join(td, "mul.zkey"), "--wasm", filepath.Join(td, "mul.wasm"), "--input", input, "-n", "2")
	if code != 0 || !strings.Contains(output, "comparison: snarkjs groth16 fullprove") {
		t.Errorf("input only: exit %d:\n%s", code, output)
	}

	// no snarkjs anywhere: zkpipe's figures alone, and the output says so
	code, output = benchBin(t, []string{"ZKPIPE_NODE_BIN=" + filepath.Join(root, "no-node"), "PATH=" + root}, args...)
	if code != 0 || !strings.Contains(output, "comparison: none (no snarkjs in ZKPIPE_NODE_BIN=") || !strings.Contains(output, "all verified against the zkey's verifying key") {
		t.Errorf("without snarkjs: exit %d:\n%s", code, output)
	}
}

// A circom bench's errors: no witnesses names the flags; a file that is no
// .wtns of this circuit, or a bad input, is named.
func TestBenchCircomErrors(t *testing.T) {
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	notObject := filepath.Join(root, "list.json")
	os.WriteFile(notObject, []byte(`[1,2]`), 0o644)
	wtns, err := os.ReadFile(filepath.Join(td, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	short, badInput := filepath.Join(root, "short.wtns"), filepath.Join(root, "c.json")
	os.WriteFile(short, wtns[:len(wtns)-32], 0o644)
	os.WriteFile(badInput, []byte(`{"c":"1"}`), 0o644)
	zkey, wasm := filepath.Join(td, "mul.zkey"), filepath.Join(td, "mul.wasm")
	notWtns := filepath.Join(td, "mul.vkey.json")
	noNode := "ZKPIPE_NODE_BIN=" + filepath.Join(root, "no-node")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--zkey", zkey}, []string{"give --wtns FILE (repeatable) or --input FILE with --wasm"}},
		{[]string{"--zkey", zkey, "--input", notObject}, []string{"give --wasm"}},
		{[]string{"--zkey", zkey, "--wasm", wasm, "--input", notObject}, []string{notObject, "not a JSON object"}},
		{[]string{"--zkey", zkey, "--wtns", filepath.Join(td, "mul.wtns"), "--wtns", notWtns}, []string{notWtns, "not a wtns file"}},
		{[]string{"--zkey", zkey, "--wtns", short}, []string{"witness " + short + ": zkpipe job b"}},
		{[]string{"--zkey", zkey, "--wasm", wasm, "--input", badInput}, []string{"witness " + badInput + ": zkpipe job b"}},
		{[]string{"--zkey", zkey, "--witness", notWtns}, []string{"--witness is for a gnark --circuit"}},
		{[]string{"--circuit", root, "--wtns", notWtns}, []string{"a gnark --circuit takes --witness"}},
		{[]string{}, []string{"give --circuit DIR (gnark) or --zkey FILE (circom)"}},
	}
	for _, c := range cases {
		code, output := benchBin(t, []string{noNode}, append(c.args, "-n", "3")...)
		if code == 0 {
			t.Errorf("%v: exit 0:\n%s", c.args, output)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(output, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, output)
			}
		}
	}
}

// A user's witnesses are bounded as the built-in ones: of 66 files at most
// 64 distinct are reused, and -n below the count reads only n of them.
func TestBenchUserWitnessesBounded(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cubic")
	gnarkUserCircuit(t, dir, false)
	wdir := filepath.Join(root, "wits")
	os.MkdirAll(wdir, 0o755)
	for x := range 66 {
		cubicWitness(t, filepath.Join(wdir, fmt.Sprintf("w%02d", x)), x, cube(x))
	}
	code, output := benchBin(t, nil, "--circuit", dir, "--witness", wdir, "-n", "66", "--skip-gnark")
	if code != 0 || !strings.Contains(output, "using the first 64 of 66 --witness files") || !strings.Contains(output, "66 proofs of 64 witnesses") {
		t.Errorf("exit %d:\n%s", code, output)
	}
	code, output = benchBin(t, nil, "--circuit", dir, "--witness", wdir, "-n", "3", "--skip-gnark")
	if code != 0 || !strings.Contains(output, "3 proofs of 3 witnesses") {
		t.Errorf("-n 3: exit %d:\n%s", code, output)
	}
}
