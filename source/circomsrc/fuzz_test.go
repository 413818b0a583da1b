package circomsrc

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/zkpipe/zkpipe/internal/runtest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// These tests use the committed files in testdata/ (see its README) and need
// no npm tools. The fuzz targets' seeds run with every `go test`; fuzz with
//
//	go test -run '^$' -fuzz FuzzParseZkey -fuzztime 60s ./source/circomsrc/
//
// (likewise FuzzParseWtns, FuzzParseR1CS, FuzzInput, FuzzCalculate).

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTestdata reads the committed zkey and witness, checks that the zkey's
// verifying key is snarkjs's verification_key.json and accepts snarkjs's own
// proof, and proves from the witness and from inputs.
func TestTestdata(t *testing.T) {
	z, err := ParseZkey(testdata(t, "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	// 21 constraints + 3 rows binding the public wires (one, c, a) → 32
	if z.NVars != 24 || z.NPublic != 2 || z.DomainSize != 32 || z.NbRows != 24 {
		t.Fatalf("zkey: %d wires, %d public, domain %d, %d rows; want 24, 2, 32, 24", z.NVars, z.NPublic, z.DomainSize, z.NbRows)
	}
	vk, err := ReadVerifyingKey("testdata/mul.vkey.json")
	if err != nil {
		t.Fatal(err)
	}
	if !sameVK(z, vk) {
		t.Fatal("the zkey's verifying key is not verification_key.json's")
	}
	if err := VerifyFiles(context.Background(), vk, "testdata/mul.proof.json", "testdata/mul.public.json"); err != nil {
		t.Fatalf("snarkjs's own proof: %v", err)
	}
	if err := VerifyFiles(context.Background(), vk, "testdata/mul.proof.json", "testdata/mul.vkey.json"); err == nil {
		t.Fatal("a vkey as public.json verified")
	}
	w, err := ParseWtns(testdata(t, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 24 || w[2].String() != "3" {
		t.Fatalf("wtns: %d values, a = %s", len(w), w[2].String())
	}

	calc, err := NewCalculator(context.Background(), testdata(t, "mul.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	defer calc.Close(context.Background())
	c, err := New("mul", z, calc, nil)
	if err != nil {
		t.Fatal(err)
	}
	// One wire is in no A term and 22 in no B term: their infinity bases go.
	// Every private wire has a C-section point: K is that section whole.
	if len(c.Sel.A) != 23 || len(c.Sel.B) != 2 || len(c.Sel.K) != 21 || c.Sel.K[0] != 3 || c.Key.Size.A != 23 || c.Key.Size.B2 != 2 {
		t.Fatalf("selections A %d, B %d, K %d from %d", len(c.Sel.A), len(c.Sel.B), len(c.Sel.K), c.Sel.K[0])
	}
	zp := zkeyBN254(t, z)
	for j, w := range c.Sel.A {
		if zp.A[w].IsInfinity() || !c.Key.Bases.(*proofdata.Bases[bn254.G1Affine, bn254.G2Affine, fft.Domain]).A[j].Equal(&zp.A[w]) {
			t.Fatalf("A base %d is not wire %d's", j, w)
		}
	}
	out := t.TempDir()
	res := runtest.Run(t, runtest.Config(out, 1, 1), []*stages.Circuit{c},
		[]*stages.Job{wtnsJob("w", "", "testdata/mul.wtns"), inputJob("i", "", `{"a":3,"b":11}`), inputJob("r", "", `{"a":0,"b":11}`)}, time.Minute)
	for _, r := range res {
		switch {
		case r.ID == "r":
			if r.Error == "" {
				t.Error("a = 0: proved; the circuit rejects it")
			}
		case r.Error != "":
			t.Errorf("%s: %s", r.ID, r.Error)
		default:
			if err := VerifyFiles(context.Background(), vk, r.Proof, r.Public); err != nil {
				t.Errorf("%s: %v", r.ID, err)
			}
			if !bytes.Equal(bytes.Join(jsonLines(t, r.Public), nil), bytes.Join(jsonLines(t, "testdata/mul.public.json"), nil)) {
				t.Errorf("%s: public inputs differ from snarkjs's", r.ID)
			}
		}
	}
}

func jsonLines(t *testing.T, path string) [][]byte {
	var ss []string
	if err := json.Unmarshal(testdataOrFile(t, path), &ss); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, s := range ss {
		out = append(out, []byte(s+","))
	}
	return out
}

func testdataOrFile(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzParseZkey(f *testing.F) {
	z := testdata(f, "mul.zkey")
	f.Add(z)
	bls := testdata(f, "bls12381/blsmul.zkey")
	f.Add(bls)
	f.Add(bls[:len(bls)-1])
	f.Add(z[:len(z)-1])
	f.Add(z[:100])
	f.Add([]byte("zkey\x01\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		z, err := ParseZkey(data)
		if err != nil {
			return
		}
		if zkeyLens(z) != [6]int{z.NVars, z.NVars, z.NVars, z.NVars - z.NPublic - 1, z.NPublic + 1, z.DomainSize} {
			t.Fatalf("parsed sizes disagree with the header: %+v", z)
		}
		for m := range z.Coefs {
			for k, row := range z.Coefs[m].Row {
				if int(row) >= z.DomainSize || int(z.Coefs[m].Wire[k]) >= z.NVars {
					t.Fatalf("coefficient %d off the key", k)
				}
			}
		}
		if _, err := New("fuzz", z, nil, nil); err != nil {
			return // e.g. B1 and B2 disagree on infinity
		}
	})
}

// TestR1CS reads the committed r1cs: its counts, the committed witness
// satisfies it, and a changed wire does not.
func TestR1CS(t *testing.T) {
	r, err := ParseR1CS(testdata(t, "mul.r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	if r.NWires != 24 || r.NPubOut != 1 || r.NPubIn != 1 || r.NPrvIn != 1 || len(r.Constraints) != 21 {
		t.Fatalf("r1cs: %d wires, %d/%d/%d outputs/public/private, %d constraints", r.NWires, r.NPubOut, r.NPubIn, r.NPrvIn, len(r.Constraints))
	}
	w, err := ParseWtns(testdata(t, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(proofdata.Scalars(w)); err != nil {
		t.Fatal(err)
	}
	w[5].SetUint64(5)
	if err := r.Check(proofdata.Scalars(w)); err == nil {
		t.Fatal("a changed wire satisfies the r1cs")
	}
	z, err := ParseZkey(testdata(t, "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New("mul", z, nil, r); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseR1CS(f *testing.F) {
	r := testdata(f, "mul.r1cs")
	f.Add(r)
	f.Add(r[:len(r)-8])
	f.Add(r[:200])
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseR1CS(data)
		if err != nil {
			return
		}
		for k, c := range r.Constraints {
			for _, lc := range [][]Term{c.A, c.B, c.C} {
				for _, term := range lc {
					if int(term.Wire) >= r.NWires {
						t.Fatalf("constraint %d: wire %d of %d", k, term.Wire, r.NWires)
					}
				}
			}
		}
	})
}

func FuzzParseWtns(f *testing.F) {
	w := testdata(f, "mul.wtns")
	f.Add(w)
	f.Add(w[:len(w)-32])
	f.Add(w[:44])
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWtns(data)
		if err != nil {
			return
		}
		if len(w) == 0 || !w[0].IsOne() {
			t.Fatal("parsed a witness without the one wire")
		}
	})
}

func FuzzInput(f *testing.F) {
	for _, s := range []string{
		`{"a":"3","b":11}`, `{"a":"0x10","b":"-5"}`, `{"xs":[1,2,[3]],"m":[[4,5],[6,7]]}`,
		`{"s":{"x":1,"y":[{"z":2}]}}`, `{"a":1.5}`, `{"a":"1e3"}`, `{"a":null}`, `[1]`, `{"a":"012"}`, `{"a":true}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sigs, err := flattenInput(json.RawMessage(s), fr.Modulus())
		if err != nil {
			return
		}
		for _, sig := range sigs {
			for _, v := range sig.values {
				if v.Sign() < 0 || v.Cmp(fr.Modulus()) >= 0 {
					t.Fatalf("%s: %s not reduced", sig.name, v)
				}
			}
		}
	})
}

var (
	fuzzCalcOnce sync.Once
	fuzzCalc     *Calculator
)

// FuzzCalculate feeds the witness calculator any inputs: it must answer with
// a witness or an error, never a panic, and stay usable afterwards.
func FuzzCalculate(f *testing.F) {
	fuzzCalcOnce.Do(func() {
		var err error
		if fuzzCalc, err = NewCalculator(context.Background(), testdata(f, "mul.wasm")); err != nil {
			f.Fatal(err)
		}
	})
	for _, s := range []string{`{"a":"3","b":11}`, `{"a":0,"b":1}`, `{"a":1}`, `{"a":[1,2],"b":1}`, `{"c":1,"a":1,"b":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ctx := context.Background()
		w, err := fuzzCalc.Calculate(ctx, json.RawMessage(s))
		if err == nil && (len(w) != 24 || !fuzzCalc.cc.isOne(w[0])) {
			t.Fatalf("%d wires", len(w))
		}
		if _, err := fuzzCalc.Calculate(ctx, json.RawMessage(`{"a":"3","b":11}`)); err != nil {
			t.Fatalf("after %q the calculator fails good inputs: %v", s, err)
		}
	})
}
