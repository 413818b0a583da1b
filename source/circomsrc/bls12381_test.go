package circomsrc

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/runtest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// BLS12-381 circom circuits: blsmul and blsmul2 are mul and mul2 compiled
// with circom --prime bls12381 over a bls12381 powers of tau
// (testdata/bls12381, scripts/make-circom-testdata-bls12381.sh).

// mulPublic is mul's public inputs [c, a], c = a²⁰·b mod the curve's r.
func mulPublic(id curve.ID, a, b int64) []string {
	r := id.ECC().ScalarField()
	av := new(big.Int).Mod(big.NewInt(a), r)
	c := new(big.Int).Exp(av, big.NewInt(20), r)
	c.Mul(c, big.NewInt(b)).Mod(c, r)
	return []string{c.String(), av.String()}
}

// TestBLS12381Testdata: the committed BLS12-381 zkey reads as BLS12-381's,
// its verifying key is snarkjs's verification_key.json, zkpipe's verifier
// accepts snarkjs's own proof and rejects it with a changed public input.
func TestBLS12381Testdata(t *testing.T) {
	f := blsCircuit(t, "blsmul")
	z, err := ReadZkeyFile(f.zkey)
	if err != nil {
		t.Fatal(err)
	}
	if z.Curve != curve.BLS12_381 || z.NVars != 24 || z.NPublic != 2 || z.DomainSize != 32 {
		t.Fatalf("zkey: %s, %d wires, %d public, domain %d; want bls12-381, 24, 2, 32", z.Curve, z.NVars, z.NPublic, z.DomainSize)
	}
	vk, err := ReadVerifyingKey(f.vkey)
	if err != nil {
		t.Fatal(err)
	}
	if vk.Curve != curve.BLS12_381 || !sameVK(z, vk) {
		t.Fatalf("the zkey's verifying key (%s) is not verification_key.json's (%s)", z.Curve, vk.Curve)
	}
	zf, err := os.Open(f.zkey)
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	if zvk, err := ReadZkeyVerifyingKey(zf); err != nil || !sameVK(z, zvk) {
		t.Fatalf("ReadZkeyVerifyingKey: not the zkey's key (%v)", err)
	}
	proof, public := filepath.Join(f.dir, "blsmul.proof.json"), filepath.Join(f.dir, "blsmul.public.json")
	if err := VerifyFiles(context.Background(), vk, proof, public); err != nil {
		t.Fatalf("snarkjs's own BLS12-381 proof: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "public.json")
	pub, _ := json.Marshal(mulPublic(curve.BLS12_381, 3, 12))
	os.WriteFile(bad, pub, 0o644)
	if err := VerifyFiles(context.Background(), vk, proof, bad); err == nil || !strings.Contains(err.Error(), "invalid proof") {
		t.Fatalf("snarkjs's proof with another public input: %v", err)
	}
	// a BN254 key does not read a BLS12-381 proof
	bnVK, err := ReadVerifyingKey(circuit(t, "mul").vkey)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyFiles(context.Background(), bnVK, proof, public); err == nil || !strings.Contains(err.Error(), "a bls12-381 proof for a bn254 verifying key") {
		t.Fatalf("a BLS12-381 proof against a BN254 key: %v", err)
	}
	id, w, err := ParseWtnsOf(testdata(t, "bls12381/blsmul.wtns"))
	if err != nil || id != curve.BLS12_381 || len(w) != 24 {
		t.Fatalf("wtns: %s, %d values, %v", id, len(w), err)
	}
	// a value ≥ r (all ones) is refused, naming it: values start after the
	// container header, the header section (n8, prime, count) and its own
	// section header
	high := testdata(t, "bls12381/blsmul.wtns")
	off := 12 + (12 + 4 + 32 + 4) + 12 + 32*5
	for i := range 32 {
		high[off+i] = 0xff
	}
	if _, _, err := ParseWtnsOf(high); err == nil || !strings.Contains(err.Error(), "value 5 is not below the field modulus") {
		t.Fatalf("a value ≥ r: %v", err)
	}
	if _, err := ParseWtns(testdata(t, "bls12381/blsmul.wtns")); err == nil || !strings.Contains(err.Error(), "a bls12-381 witness") {
		t.Fatalf("ParseWtns (BN254's) of a BLS12-381 wtns: %v", err)
	}
}

// TestBLS12381Stream proves BLS12-381 circom jobs, from a .wtns and from
// inputs, in one stream with BN254 circom jobs: snarkjs and zkpipe's
// verifier accept every proof; an unsatisfied input, a rejected one and a
// witness of the other curve (both ways) each fail alone, saying why.
func TestBLS12381Stream(t *testing.T) {
	bls, bls2, mul := blsCircuit(t, "blsmul"), blsCircuit(t, "blsmul2"), circuit(t, "mul")
	tmp, out := t.TempDir(), t.TempDir()
	blsW := bls.wtns(t, tmp, "bls", `{"a":"3","b":"11"}`)
	bls2W := bls2.wtns(t, tmp, "bls2", `{"a":"3","b":"11"}`)
	mulW := mul.wtns(t, tmp, "mul", `{"a":"3","b":"11"}`)

	ctx := context.Background()
	z, err := ReadZkeyFile(bls.zkey)
	if err != nil {
		t.Fatal(err)
	}
	r1cs, err := ReadR1CSFile(filepath.Join(bls.dir, "blsmul.r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	withR1CS, err := New("blsmul-r1cs", z, nil, r1cs)
	if err != nil {
		t.Fatal(err)
	}
	// blsmul's key with blsmul2's calculator: same wires, other
	// constraints, so its witnesses of good inputs do not satisfy blsmul
	code, err := os.ReadFile(bls2.wasm)
	if err != nil {
		t.Fatal(err)
	}
	calc2, err := NewCalculator(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	otherWasm, err := New("blsmul-otherwasm", z, calc2, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { calc2.Close(ctx) })
	circuits := []*stages.Circuit{load(t, bls, true), withR1CS, otherWasm, load(t, mul, true)}
	// witnesses as values: BLS12-381's []fr.Element for blsmul; BN254's is refused
	data, err := os.ReadFile(blsW)
	if err != nil {
		t.Fatal(err)
	}
	_, blsWires, err := ParseWtnsOf(data)
	if err != nil {
		t.Fatal(err)
	}
	valueJob := func(id string, v any) *stages.Job {
		j := job(id, "blsmul")
		j.WitnessInput = blob.Value("its witness value", v)
		return j
	}
	bnWires := make([]bnfr.Element, len(blsWires))

	jobs := []*stages.Job{
		wtnsJob("b-w1", "blsmul", blsW),
		inputJob("b-i1", "blsmul", `{"a":"3","b":11}`),
		inputJob("bad-unsat-input", "blsmul-otherwasm", `{"a":"3","b":11}`),
		wtnsJob("m-w1", "mul", mulW),
		inputJob("b-i2", "blsmul", `{"a":"0x10","b":"-5"}`),
		inputJob("bad-reject", "blsmul", `{"a":"0","b":"7"}`),
		wtnsJob("bad-bn-for-bls", "blsmul", mulW),
		wtnsJob("bad-bls-for-bn", "mul", blsW),
		inputJob("m-i1", "mul", `{"a":"3","b":11}`),
		wtnsJob("bad-unsat", "blsmul", bls2W),
		wtnsJob("r-w1", "blsmul-r1cs", blsW),
		wtnsJob("bad-unsat-r1cs", "blsmul-r1cs", bls2W),
		inputJob("b-i3", "blsmul", `{"a":"5","b":"6"}`),
		valueJob("b-v1", proofdata.Elements[blsfr.Element](blsWires)),
		valueJob("bad-bn-value", bnWires),
	}
	wantErr := map[string][]string{
		"bad-unsat-input": {"the witness does not satisfy circuit blsmul-otherwasm"},
		"bad-reject":      {"assert failed"},
		"bad-bn-for-bls":  {"job bad-bn-for-bls", mulW, "is a bn254 witness", "circuit blsmul is bls12-381's"},
		"bad-bls-for-bn":  {"job bad-bls-for-bn", blsW, "is a bls12-381 witness", "circuit mul is bn254's"},
		"bad-unsat":       {"does not satisfy circuit blsmul"},
		"bad-unsat-r1cs":  {"unsatisfied witness: the witness does not satisfy constraint 0 of 21"},
		"bad-bn-value":    {"witness value is a []github.com/consensys/gnark-crypto/ecc/bn254/fr.Element, circuit blsmul (bls12-381) wants its wires as bls12-381's []fr.Element"},
	}
	want := map[string][]string{
		"b-w1": mulPublic(curve.BLS12_381, 3, 11), "b-i1": mulPublic(curve.BLS12_381, 3, 11),
		"b-i2": mulPublic(curve.BLS12_381, 16, -5), "b-i3": mulPublic(curve.BLS12_381, 5, 6),
		"r-w1": mulPublic(curve.BLS12_381, 3, 11), "b-v1": mulPublic(curve.BLS12_381, 3, 11),
		"m-w1": mulPublic(curve.BN254, 3, 11), "m-i1": mulPublic(curve.BN254, 3, 11),
	}

	res := runtest.Run(t, runtest.Config(out, 2, 1), circuits, jobs, 2*time.Minute)
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	vkeys := map[string]string{"blsmul": bls.vkey, "blsmul-r1cs": bls.vkey, "mul": mul.vkey}
	if proved := len(res) - len(wantErr); proved != len(want) {
		t.Errorf("%d jobs proved or not failing as expected; want %d proofs", proved, len(want))
	}
	for _, r := range res {
		if subs, bad := wantErr[r.ID]; bad {
			for _, s := range subs {
				if r.Error == "" || !strings.Contains(r.Error, s) {
					t.Errorf("%s: error %q, want one containing %q", r.ID, r.Error, s)
				}
			}
			if _, err := os.Stat(filepath.Join(out, r.ID+".proof.json")); err == nil {
				t.Errorf("%s: failed, yet wrote a proof", r.ID)
			}
			continue
		}
		if r.Error != "" {
			t.Errorf("%s: %s", r.ID, r.Error)
			continue
		}
		if strings.Join(r.PublicInputs, ",") != strings.Join(want[r.ID], ",") {
			t.Errorf("%s: public inputs %v, want %v", r.ID, r.PublicInputs, want[r.ID])
		}
		if !snarkjsVerify(t, vkeys[r.Circuit], r.Public, r.Proof) {
			t.Errorf("%s: snarkjs rejects zkpipe's proof", r.ID)
		}
		vk, err := ReadVerifyingKey(vkeys[r.Circuit])
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyFiles(ctx, vk, r.Proof, r.Public); err != nil {
			t.Errorf("%s: zkpipe's verifier: %v", r.ID, err)
		}
		var pj ProofJSON
		if b, err := os.ReadFile(r.Proof); err != nil || json.Unmarshal(b, &pj) != nil {
			t.Fatalf("%s: %v", r.Proof, err)
		}
		if wantCurve := map[curve.ID]string{curve.BN254: "bn128", curve.BLS12_381: "bls12381"}[vk.Curve]; pj.Curve != wantCurve || pj.Protocol != "groth16" {
			t.Errorf("%s: proof.json says %q on %q, want groth16 on %q", r.ID, pj.Protocol, pj.Curve, wantCurve)
		}
	}
}

// TestBLS12381FilesOfOneCurve: a circuit's zkey, wasm and r1cs must be of
// one curve; a mix is refused at load, naming the circuit and both curves.
func TestBLS12381FilesOfOneCurve(t *testing.T) {
	bls, mul := blsCircuit(t, "blsmul"), circuit(t, "mul")
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		files Files
		want  []string
	}{
		{"bls zkey, bn254 wasm", Files{Zkey: bls.zkey, Wasm: mul.wasm}, []string{"circuit blsmul", "the wasm computes a bn254 witness", "the zkey is bls12-381's"}},
		{"bn254 zkey, bls wasm", Files{Zkey: mul.zkey, Wasm: bls.wasm}, []string{"circuit mul", "the wasm computes a bls12-381 witness", "the zkey is bn254's"}},
		{"bls zkey, bn254 r1cs", Files{Zkey: bls.zkey, R1CS: filepath.Join(mul.dir, "mul.r1cs")}, []string{"circuit blsmul", "the r1cs is over bn254's field", "the zkey is bls12-381's"}},
	} {
		c2, err := LoadFiles(ctx, c.files)
		if err == nil {
			c2.Source.(*Source).Close(ctx)
			t.Errorf("%s: loaded", c.name)
			continue
		}
		for _, s := range c.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %v, want an error containing %q", c.name, err, s)
			}
		}
	}
}

// TestSnarkjsRootsOfUnity: snarkjs's 2^s-th root of unity is gnark-crypto's
// to the power snarkjsPower finds: 1 for BN254 (one root), another odd
// power for BLS12-381, whose proofs fail without the remapping.
func TestSnarkjsRootsOfUnity(t *testing.T) {
	for _, c := range []struct {
		id      curve.ID
		root    string // gnark-crypto's 2^s-th root (fr.Generator(2^s))
		wantOne bool
	}{
		{curve.BN254, "19103219067921713944291392827692070036145651957329286315305642004821462161904", true},
		{curve.BLS12_381, "10238227357739495823651030575849232062558860180284477541189508159991286009131", false},
	} {
		r := c.id.ECC().ScalarField()
		g, _ := new(big.Int).SetString(c.root, 10)
		k := snarkjsPower(c.id, r, g)
		if got := new(big.Int).Exp(g, new(big.Int).SetUint64(k), r); got.Cmp(snarkjsRoot(r)) != 0 || k%2 == 0 {
			t.Errorf("%s: root^%d is not snarkjs's root (or K is even)", c.id, k)
		}
		if (k == 1) != c.wantOne {
			t.Errorf("%s: K = %d", c.id, k)
		}
	}
}

// TestZkeyFieldsOfOneCurve: a zkey whose q is BN254's and r BLS12-381's
// is refused, naming both; so is a prime of neither curve.
func TestZkeyFieldsOfOneCurve(t *testing.T) {
	le := func(m *big.Int) []byte {
		b := m.FillBytes(make([]byte, 32))
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return b
	}
	data := testdata(t, "mul.zkey")
	bnR := le(curve.BN254.ECC().ScalarField())
	at := strings.Index(string(data), string(bnR)) // the Groth16 header's r
	if at < 0 {
		t.Fatal("no BN254 r in mul.zkey")
	}
	mixed := append([]byte(nil), data...)
	copy(mixed[at:], le(curve.BLS12_381.ECC().ScalarField()))
	if _, err := ParseZkey(mixed); err == nil || !strings.Contains(err.Error(), "the base field q is bn254's, the scalar field r bls12-381's") {
		t.Errorf("BN254's q with BLS12-381's r: %v", err)
	}
	other := append([]byte(nil), data...)
	other[at] ^= 2 // r+2 or r−2: no curve's
	if _, err := ParseZkey(other); err == nil || !strings.Contains(err.Error(), "scalar field r is") || !strings.Contains(err.Error(), "only BN254") {
		t.Errorf("a prime of no curve: %v", err)
	}
}
