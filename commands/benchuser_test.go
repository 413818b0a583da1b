package commands

import (
	"bytes"
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
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &cubic{})
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
	for _, raw := range []bool{false, true} {
		name := map[bool]string{false: "compressed", true: "raw"}[raw]
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "cubic")
			vk := gnarkUserCircuit(t, dir, raw)
			wdir := filepath.Join(root, "wits")
			os.MkdirAll(wdir, 0o755)
			cubicWitness(t, filepath.Join(wdir, "a.wit"), 3, cube(3))
			cubicWitness(t, filepath.Join(wdir, "b.wit"), 4, cube(4))
			cubicWitness(t, filepath.Join(root, "c.wit"), 5, cube(5))
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
		{[]string{"--circuit", dir, "--witness", good, "--witness", other}, []string{other, "circuit cubic wants 1 and 1"}},
		{[]string{"--circuit", dir, "--witness", good, "--witness", wrong}, []string{wrong, "gnark groth16.Prove"}},
		{[]string{"--circuit", dir, "--witness", good, "--witness", wrong, "--skip-gnark"}, []string{"witness " + wrong + ") failed"}},
		{[]string{"--circuit", dir, "--witness", filepath.Join(root, "*.none")}, []string{"no file matches"}},
		{[]string{"--circuit", dir, "--witness", filepath.Join(root, "absent.wit")}, []string{"absent.wit", "no such file"}},
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
