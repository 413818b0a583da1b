package circomsrc

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

const remake = "run scripts/make-circom-testdata.sh (see its header) and commit what it changes"

// TestCommittedCircuitsMatchTheirSources checks, without the npm tools, that
// testdata's committed files are what scripts/make-circom-testdata.sh made
// from the committed sources, and of one circuit each:
//   - every file is as circuits.sha256 (the script's last step) lists it, and
//     every NAME.circom has its four files listed: a source edited since,
//     or a key replaced by hand, fails here;
//   - the zkey's A and B are the r1cs's, row for row, plus the rows that bind
//     the public wires, and its wire counts are the r1cs's;
//   - NAME.vkey.json is the zkey's verifying key;
//   - the wasm computes a witness of NAME.input.json that satisfies the r1cs.
func TestCommittedCircuitsMatchTheirSources(t *testing.T) {
	// BN254's circuits in testdata, BLS12-381's in testdata/bls12381
	// (scripts/make-circom-testdata-bls12381.sh)
	for dir, want := range map[string]curve.ID{"testdata": curve.BN254, "testdata/bls12381": curve.BLS12_381} {
		t.Run(want.String(), func(t *testing.T) { checkCommitted(t, dir, want) })
	}
}

func checkCommitted(t *testing.T, dir string, id curve.ID) {
	listed := readSums(t, filepath.Join(dir, "circuits.sha256"))
	for name, sum := range listed {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("circuits.sha256 lists %s: %v; %s", name, err, remake)
			continue
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s/%s is not the file circuits.sha256 lists: %s", dir, name, remake)
		}
	}
	sources, err := filepath.Glob(filepath.Join(dir, "*.circom"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no %s/*.circom: %v", dir, err)
	}
	for _, src := range sources {
		name := strings.TrimSuffix(filepath.Base(src), ".circom")
		t.Run(name, func(t *testing.T) {
			for _, ext := range []string{".circom", ".input.json", ".r1cs", ".wasm", ".zkey", ".vkey.json"} {
				if _, ok := listed[name+ext]; !ok {
					t.Errorf("circuits.sha256 does not list %s%s: %s", name, ext, remake)
				}
			}
			checkOneCircuit(t, dir, name, id)
		})
	}
}

// readSums reads sha256sum's output: "HASH  NAME" lines.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v: %s", err, remake)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("%s: line %q is not sha256sum's", path, sc.Text())
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

func checkOneCircuit(t *testing.T, dir, name string, id curve.ID) {
	td := func(ext string) string { return filepath.Join(dir, name+ext) }
	r1cs, err := ReadR1CSFile(td(".r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	z, err := ReadZkeyFile(td(".zkey"))
	if err != nil {
		t.Fatal(err)
	}
	if z.Curve != id || r1cs.Curve != id {
		t.Fatalf("the zkey is %s's, the r1cs %s's; %s's wanted here: %s", z.Curve, r1cs.Curve, id, remake)
	}
	m := len(r1cs.Constraints)
	if r1cs.NWires != z.NVars || r1cs.NPublic() != z.NPublic || m+z.NPublic+1 != z.NbRows {
		t.Fatalf("the r1cs (%d wires, %d public, %d constraints) and the zkey (%d wires, %d public, %d rows) are not of one circuit: %s",
			r1cs.NWires, r1cs.NPublic(), m, z.NVars, z.NPublic, z.NbRows, remake)
	}
	// field values as integers below r, summed mod r
	cc, r := curveOf(id), id.ECC().ScalarField()
	value := func(s proofdata.Scalar) *big.Int {
		v, _ := new(big.Int).SetString(cc.decimals([]proofdata.Scalar{s})[0], 10)
		return v
	}
	// snarkjs's coefficient section: A and B of each constraint, then one
	// row of A per public wire (the one wire included) selecting that wire.
	for k, lc := range [2]string{"A", "B"} {
		want := map[[2]uint32]string{}
		for i, c := range r1cs.Constraints {
			for _, term := range [2][]Term{c.A, c.B}[k] {
				if v := value(term.Value); v.Sign() != 0 {
					want[[2]uint32{uint32(i), term.Wire}] = v.String()
				}
			}
		}
		if k == 0 {
			for w := 0; w <= z.NPublic; w++ {
				want[[2]uint32{uint32(m + w), uint32(w)}] = "1"
			}
		}
		sums := map[[2]uint32]*big.Int{}
		co := z.Coefs[k]
		for j := range co.Row {
			key := [2]uint32{co.Row[j], co.Wire[j]}
			if sums[key] == nil {
				sums[key] = new(big.Int)
			}
			sums[key].Add(sums[key], value(co.Value[j])).Mod(sums[key], r)
		}
		got := map[[2]uint32]string{}
		for key, v := range sums {
			if v.Sign() != 0 {
				got[key] = v.String()
			}
		}
		if len(got) != len(want) {
			t.Fatalf("the zkey's %s has %d coefficients, the r1cs's (and the public rows) %d: %s", lc, len(got), len(want), remake)
		}
		for key, w := range want {
			if v, ok := got[key]; !ok || v != w {
				t.Fatalf("the zkey's %s at row %d, wire %d is %s, the r1cs's %s: %s", lc, key[0], key[1], v, w, remake)
			}
		}
	}

	vk, err := ReadVerifyingKey(td(".vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !sameVK(z, vk) {
		t.Fatalf("%s.vkey.json is not %s.zkey's verifying key: %s", name, name, remake)
	}

	wasm, err := os.ReadFile(td(".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	input, err := os.ReadFile(td(".input.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calc, err := NewCalculator(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer calc.Close(ctx)
	if calc.Curve() != id {
		t.Fatalf("the wasm is for %s's prime, %s's wanted: %s", calc.Curve(), id, remake)
	}
	w, err := calc.Calculate(ctx, input)
	if err != nil {
		t.Fatalf("the wasm on %s.input.json: %v", name, err)
	}
	if len(w) != r1cs.NWires {
		t.Fatalf("the wasm computes %d wires, the r1cs has %d: %s", len(w), r1cs.NWires, remake)
	}
	if err := r1cs.Check(w); err != nil {
		t.Fatalf("the wasm's witness of %s.input.json does not satisfy the r1cs: %v: %s", name, err, remake)
	}
}
