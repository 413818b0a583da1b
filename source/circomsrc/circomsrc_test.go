package circomsrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/internal/runtest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func load(t *testing.T, f *fixture, withWasm bool) *stages.Circuit {
	t.Helper()
	wasm := ""
	if withWasm {
		wasm = f.wasm
	}
	c, err := Load(context.Background(), f.zkey, wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Source.(*Source).Close(context.Background()) })
	return c
}

func job(id, circuit string) *stages.Job {
	return &stages.Job{Request: stream.Request{ID: id, Circuit: circuit}}
}

func wtnsJob(id, circuit, path string) *stages.Job {
	j := job(id, circuit)
	j.Wtns = path
	return j
}

func inputJob(id, circuit, input string) *stages.Job {
	j := job(id, circuit)
	j.Input = json.RawMessage(input)
	return j
}

// corrupt writes a changed copy of the file at path.
func corrupt(t *testing.T, path, name string, change func([]byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(path), name)
	if err := os.WriteFile(out, change(bytes.Clone(b)), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStream proves wtns and input jobs for two circom circuits in one stream
// mixed with bad jobs: snarkjs accepts every proof, each bad job fails alone
// with an error that says why, and the stream goes on.
func TestStream(t *testing.T) {
	mul, arr, mul2 := circuit(t, "mul"), circuit(t, "arr"), circuit(t, "mul2")
	nopub := circuit(t, "nopub")
	tmp, out := t.TempDir(), t.TempDir()

	mulW := mul.wtns(t, tmp, "mul", `{"a":"3","b":"11"}`)
	arrW := arr.wtns(t, tmp, "arr", `{"xs":[1,2,3],"m":[[4,5],[6,7]]}`)
	mul2W := mul2.wtns(t, tmp, "mul2", `{"a":"3","b":"11"}`)

	z, err := ReadZkeyFile(mul.zkey)
	if err != nil {
		t.Fatal(err)
	}
	noWasm, err := New("mul-nowasm", z, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r1cs, err := ReadR1CSFile(filepath.Join(mul.dir, "mul.r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	withR1CS, err := New("mul-r1cs", z, nil, r1cs)
	if err != nil {
		t.Fatal(err)
	}
	circuits := []*stages.Circuit{load(t, mul, true), load(t, arr, true), noWasm, withR1CS, load(t, nopub, true)}

	good := map[string][]string{ // id → public inputs (c, a for mul; y for arr)
		"m-w1": nil, "m-i1": nil, "m-i2": nil, "a-w1": nil, "a-i1": nil, "n-w1": nil, "r-w1": nil, "p-i1": nil,
	}
	jobs := []*stages.Job{
		wtnsJob("m-w1", "mul", mulW),
		inputJob("m-i1", "mul", `{"a":"3","b":11}`),
		wtnsJob("bad-trunc", "mul", corrupt(t, mulW, "trunc.wtns", func(b []byte) []byte { return b[:len(b)-10] })),
		inputJob("m-i2", "mul", `{"a":"0x10","b":"-5"}`),
		wtnsJob("bad-magic", "mul", corrupt(t, mulW, "magic.wtns", func(b []byte) []byte { copy(b, "wtnx"); return b })),
		wtnsJob("bad-size", "mul", corrupt(t, mulW, "size.wtns", func(b []byte) []byte {
			// the values section one value short
			return resection(t, b, 2, func(s []byte) []byte { return s[:len(s)-32] })
		})),
		wtnsJob("bad-count", "mul", corrupt(t, mulW, "count.wtns", func(b []byte) []byte {
			// the header counts 23 values (after magic, version, count,
			// section header, n8 and the prime)
			binary.LittleEndian.PutUint32(b[12+12+4+32:], 23)
			return b
		})),
		wtnsJob("bad-trailing", "mul", corrupt(t, mulW, "trailing.wtns", func(b []byte) []byte { return append(b, 0) })),
		wtnsJob("bad-huge", "mul", corrupt(t, mulW, "huge.wtns", func(b []byte) []byte { return append(b, make([]byte, 5000)...) })),
		wtnsJob("bad-device", "mul", "/dev/zero"),
		wtnsJob("a-w1", "arr", arrW),
		wtnsJob("bad-other", "mul", arrW),
		wtnsJob("bad-unsat", "mul", mul2W),
		inputJob("bad-reject", "mul", `{"a":"0","b":"7"}`),
		inputJob("bad-unknown", "mul", `{"a":1,"b":2,"zz":3}`),
		inputJob("bad-missing", "mul", `{"a":1}`),
		inputJob("bad-toomany", "arr", `{"xs":[1,2,3,4],"m":[[4,5],[6,7]]}`),
		inputJob("bad-value", "mul", `{"a":"x1","b":2}`),
		inputJob("bad-long", "mul", `{"a":"`+strings.Repeat("9", 4<<20)+`","b":2}`),
		inputJob("a-i1", "arr", `{"xs":[1,2,3],"m":[[4,5],[6,7]]}`),
		wtnsJob("bad-missingfile", "mul", filepath.Join(tmp, "nope.wtns")),
		inputJob("bad-nowasm", "mul-nowasm", `{"a":"3","b":11}`),
		wtnsJob("n-w1", "mul-nowasm", mulW),
		wtnsJob("r-w1", "mul-r1cs", mulW),
		inputJob("p-i1", "nopub", `{"a":5,"b":6}`),
		wtnsJob("bad-unsat-r1cs", "mul-r1cs", mul2W),
		{Request: stream.Request{ID: "bad-both", Circuit: "mul", Wtns: mulW, Input: json.RawMessage(`{"a":1,"b":1}`)}},
		{Request: stream.Request{ID: "bad-gnark", Circuit: "mul", Witness: mulW}},
	}
	wantErr := map[string]string{
		"bad-trunc":       "truncated",
		"bad-magic":       "not a wtns file",
		"bad-size":        "values section: 24 values need 768 bytes, the section has 736",
		"bad-count":       "values section: 23 values need 736 bytes, the section has 768",
		"bad-trailing":    "1 trailing bytes after the last of 2 sections",
		"bad-huge":        "more than 4940 bytes, far more than a witness",
		"bad-device":      "/dev/zero: a character device that cannot be read with a deadline",
		"bad-other":       "a witness for another circuit",
		"bad-unsat":       "does not satisfy circuit mul",
		"bad-unsat-r1cs":  "synthesize: unsatisfied witness: the witness does not satisfy constraint 0 of 21",
		"bad-reject":      "assert failed",
		"bad-unknown":     "signal zz not found",
		"bad-missing":     "only 1 of 2 input values set",
		"bad-toomany":     "too many values for input signal xs",
		"bad-value":       `"x1" is not an integer`,
		"bad-long":        "input a: a value of 4194304 characters, more than the 1024",
		"bad-missingfile": "no such file",
		"bad-nowasm":      "give circomsrc.Files.Wasm",
		"bad-both":        "not both",
		"bad-gnark":       "give wtns or input",
	}

	res := runtest.Run(t, runtest.Config(out, 2, 1), circuits, jobs, 2*time.Minute)
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	vkeys := map[string]string{"mul": mul.vkey, "arr": arr.vkey, "mul-nowasm": mul.vkey, "mul-r1cs": mul.vkey, "nopub": nopub.vkey}
	for _, r := range res {
		if want, bad := wantErr[r.ID]; bad {
			if r.Error == "" || !strings.Contains(r.Error, want) {
				t.Errorf("%s: error %q, want one containing %q", r.ID, r.Error, want)
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
		good[r.ID] = r.PublicInputs
		if !snarkjsVerify(t, vkeys[r.Circuit], r.Public, r.Proof) {
			t.Errorf("%s: snarkjs rejects zkpipe's proof", r.ID)
		}
		vk, err := ReadVerifyingKey(vkeys[r.Circuit])
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyFiles(context.Background(), vk, r.Proof, r.Public); err != nil {
			t.Errorf("%s: zkpipe's verifier: %v", r.ID, err)
		}
	}
	// Public inputs: [c, a] for mul (c = a²⁰·b), [y] for arr; a wtns job and
	// an input job with the same inputs agree.
	want := func(a, b int64) []string {
		var av, bv, c fr.Element
		av.SetInt64(a)
		bv.SetInt64(b)
		c.Exp(av, bigInt(20)).Mul(&c, &bv)
		return []string{c.String(), av.String()}
	}
	eq := func(id string, w []string) {
		if strings.Join(good[id], ",") != strings.Join(w, ",") {
			t.Errorf("%s: public inputs %v, want %v", id, good[id], w)
		}
	}
	eq("m-w1", want(3, 11))
	eq("m-i1", want(3, 11))
	eq("n-w1", want(3, 11))
	eq("r-w1", want(3, 11))
	eq("m-i2", want(16, -5))
	eq("a-i1", good["a-w1"])
	if b, err := os.ReadFile(filepath.Join(out, "p-i1.public.json")); err != nil || string(b) != "[]" {
		t.Errorf("p-i1: public.json %q (%v), want []", b, err)
	}
	if len(good["a-w1"]) != 1 {
		t.Errorf("a-w1: public inputs %v, want one", good["a-w1"])
	}
}

// TestTampered checks that snarkjs and zkpipe's verifier reject a zkpipe
// proof with a changed point, a changed public input, or another circuit's key.
func TestTampered(t *testing.T) {
	mul, arr := circuit(t, "mul"), circuit(t, "arr")
	out := t.TempDir()
	res := runtest.Run(t, runtest.Config(out, 1, 1), []*stages.Circuit{load(t, mul, true)},
		[]*stages.Job{inputJob("p", "", `{"a":"5","b":"7"}`)}, time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("prove: %+v", res)
	}
	r := res[0]
	if !snarkjsVerify(t, mul.vkey, r.Public, r.Proof) {
		t.Fatal("snarkjs rejects the untampered proof")
	}
	var p ProofJSON
	readJSON(t, r.Proof, &p)
	var pub []string
	readJSON(t, r.Public, &pub)

	swapped := p
	swapped.A, swapped.C = p.C, p.A
	badPub := append([]string(nil), pub...)
	badPub[1] = "6"
	cases := []struct {
		name, vkey string
		proof      any
		public     any
	}{
		{"points swapped", mul.vkey, swapped, pub},
		{"public input changed", mul.vkey, p, badPub},
		{"another circuit's key", arr.vkey, p, pub[:1]},
	}
	mulVK, err := ReadVerifyingKey(mul.vkey)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		proof, public := writeJSON(t, out, "t.proof.json", c.proof), writeJSON(t, out, "t.public.json", c.public)
		if snarkjsVerify(t, c.vkey, public, proof) {
			t.Errorf("%s: snarkjs accepts", c.name)
		}
		vk := mulVK
		if c.vkey != mul.vkey {
			if vk, err = ReadVerifyingKey(c.vkey); err != nil {
				t.Fatal(err)
			}
		}
		if err := VerifyFiles(context.Background(), vk, proof, public); err == nil {
			t.Errorf("%s: zkpipe's verifier accepts", c.name)
		}
	}
}

// TestCalculator checks that the Go witness calculator (wazero) computes the
// same witness as snarkjs's (Node), whichever way it reads the witness out:
// zkpipeReadWitness (the default), a wire a call with the shared memory
// read directly, and a 32-bit word a call.
func TestCalculator(t *testing.T) {
	for _, mode := range []string{"bulk", "wire by wire", "word by word"} {
		testCalculator(t, mode)
	}
}

func testCalculator(t *testing.T, mode string) {
	arr := circuit(t, "arr")
	code, err := os.ReadFile(arr.wasm)
	if err != nil {
		t.Fatal(err)
	}
	calc, err := NewCalculator(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	if !calc.bulk {
		t.Fatalf("circom2's module takes no bulk witness reader: %v", calc.noBulk)
	}
	calc.wireByWire, calc.wordByWord = mode != "bulk", mode == "word by word"
	defer calc.Close(context.Background())
	for i, in := range []string{
		`{"xs":[1,2,3],"m":[[4,5],[6,7]]}`,
		`{"m":[["0x1f","-3"],[6,"21888242871839275222246405745257275088548364400416034343698204186575808495618"]],"xs":[9,8,7]}`,
	} {
		gotS, err := calc.Calculate(context.Background(), json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		got := proofdata.Elements[fr.Element](gotS)
		want, err := os.ReadFile(arr.wtns(t, t.TempDir(), "w", in))
		if err != nil {
			t.Fatal(err)
		}
		wantW, err := ParseWtns(want)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(wantW) {
			t.Fatalf("%s, input %d: %d wires, snarkjs %d", mode, i, len(got), len(wantW))
		}
		for k := range got {
			if !got[k].Equal(&wantW[k]) {
				t.Fatalf("%s, input %d: wire %d is %s, snarkjs says %s", mode, i, k, got[k].String(), wantW[k].String())
			}
		}
	}
}

// TestCalculatorReuse: witnesses computed on pooled instances, one after
// another (each instance reused after other inputs and after rejected
// ones) and from several goroutines at once, are those of a fresh
// calculator for each input. Run with -race: instances are never shared
// between live computations.
func TestCalculatorReuse(t *testing.T) {
	ctx := context.Background()
	arr := circuit(t, "arr")
	code, err := os.ReadFile(arr.wasm)
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([]string, 12)
	for i := range inputs {
		inputs[i] = fmt.Sprintf(`{"xs":[%d,%d,%d],"m":[[%d,5],[6,"%d"]]}`, i, i*i+1, 3, 7*i, -i)
	}
	fresh := make([][]fr.Element, len(inputs))
	for i, in := range inputs {
		c, err := NewCalculator(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.Calculate(ctx, json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		fresh[i] = proofdata.Elements[fr.Element](w)
		c.Close(ctx)
	}
	same := func(who string, i int, gotS []proofdata.Scalar) error {
		got := proofdata.Elements[fr.Element](gotS)
		for k := range got {
			if !got[k].Equal(&fresh[i][k]) {
				return fmt.Errorf("%s, input %d: wire %d is %s, a fresh calculator's is %s", who, i, k, got[k].String(), fresh[i][k].String())
			}
		}
		if len(got) != len(fresh[i]) {
			return fmt.Errorf("%s, input %d: %d wires, a fresh calculator's %d", who, i, len(got), len(fresh[i]))
		}
		return nil
	}

	calc, err := NewCalculator(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	defer calc.Close(ctx)
	// One after another: one instance, reused (backwards, so no input
	// meets the state a fresh calculator had); an input the circuit
	// rejects halfway drops its instance, and the next starts a new one.
	for i := len(inputs) - 1; i >= 0; i-- {
		got, err := calc.Calculate(ctx, json.RawMessage(inputs[i]))
		if err != nil {
			t.Fatal(err)
		}
		if err := same("reused", i, got); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if _, err := calc.Calculate(ctx, json.RawMessage(`{"xs":[1,2,3]}`)); err == nil {
				t.Fatal("an input without m was accepted")
			}
		}
	}
	calc.mu.Lock()
	pooled, made := len(calc.free), calc.made
	calc.mu.Unlock()
	// NewCalculator's own (inputs 11 … 10), then one after the rejections
	// at 10 and 5 (inputs 9 … 5, 4 … 0); the rejection at 0 drops the last.
	if pooled != 0 || made != 3 {
		t.Fatalf("%d instances made, %d pooled; want 3 and 0 (each reused until a rejection drops it)", made, pooled)
	}
	// From several goroutines at once: each input three times.
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(inputs))
	for r := 0; r < 3; r++ {
		for i := range inputs {
			wg.Go(func() {
				got, err := calc.Calculate(ctx, json.RawMessage(inputs[i]))
				if err == nil {
					err = same("concurrent", i, got)
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestLoadErrors: corrupt zkeys and a wasm of another circuit fail at load
// with an error that says what is wrong.
func TestLoadErrors(t *testing.T) {
	mul, arr := circuit(t, "mul"), circuit(t, "arr")
	dir := t.TempDir()
	cp := func(name string, change func([]byte) []byte) string {
		b, err := os.ReadFile(mul.zkey)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, change(b), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ name, zkey, wasm, want string }{
		{"truncated", cp("t.zkey", func(b []byte) []byte { return b[:len(b)/2] }), "", "truncated"},
		{"wrong magic", cp("m.zkey", func(b []byte) []byte { copy(b, "zkez"); return b }), "", "not a zkey file"},
		{"not groth16", cp("p.zkey", func(b []byte) []byte { b[24] = 2; return b }), "", "only Groth16"},
		{"wrong section size", cp("s.zkey", func(b []byte) []byte {
			return resection(t, b, 5, func(s []byte) []byte { return s[:len(s)-64] })
		}), "", "A section: 24 points need 1536 bytes, the section has 1472"},
		{"wrong header size", cp("h.zkey", func(b []byte) []byte {
			// the first section's size field overruns the file
			binary.LittleEndian.PutUint64(b[16:], 1<<40)
			return b
		}), "", "section 1 (type 1) says 1099511627776 bytes, the file has"},
		{"a coefficient off the circuit", cp("c.zkey", func(b []byte) []byte {
			return resection(t, b, 4, func(s []byte) []byte {
				binary.LittleEndian.PutUint32(s[4+8:], 24) // wire of the first coefficient
				return s
			})
		}), "", "coefficient 0: wire 24 of 24"},
		{"a point off the curve", cp("o.zkey", func(b []byte) []byte {
			return resection(t, b, 3, func(s []byte) []byte { s[0] ^= 1; return s })
		}), "", "IC section: point 0 is not on the curve"},
		{"trailing bytes", cp("x.zkey", func(b []byte) []byte { return append(b, 1, 2, 3) }), "", "3 trailing bytes after the last"},
		{"wasm of another circuit", mul.zkey, arr.wasm, "not of one circuit"},
		{"not wasm", mul.zkey, mul.zkey, "not a circom witness calculator"},
		{"missing", filepath.Join(dir, "none.zkey"), "", "no such file"},
	} {
		_, err := Load(context.Background(), c.zkey, c.wasm)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ name, r1cs, want string }{
		{"r1cs of another circuit", filepath.Join(arr.dir, "arr.r1cs"), "the r1cs (112 wires, 1 public, 104 constraints) and the zkey (24 wires, 2 public, 24 rows) are not of one circuit"},
		{"a zkey for an r1cs", mul.zkey, "not a r1cs file"},
	} {
		_, err := LoadFiles(context.Background(), Files{Zkey: mul.zkey, R1CS: c.r1cs})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func bigInt(x int64) *big.Int { return big.NewInt(x) }

// resection re-encodes a snarkjs binary file with section typ's data changed,
// every size field consistent with the new data.
func resection(t *testing.T, b []byte, typ uint32, change func([]byte) []byte) []byte {
	t.Helper()
	out := bytes.Clone(b[:12])
	pos, found := 12, false
	for i := uint32(0); i < binary.LittleEndian.Uint32(b[8:]); i++ {
		ty := binary.LittleEndian.Uint32(b[pos:])
		size := int(binary.LittleEndian.Uint64(b[pos+4:]))
		data := bytes.Clone(b[pos+12 : pos+12+size])
		pos += 12 + size
		if ty == typ {
			data, found = change(data), true
		}
		out = binary.LittleEndian.AppendUint32(out, ty)
		out = binary.LittleEndian.AppendUint64(out, uint64(len(data)))
		out = append(out, data...)
	}
	if !found {
		t.Fatalf("no section %d", typ)
	}
	return out
}
