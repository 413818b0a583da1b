package circomsrc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/internal/peakrss"
	"github.com/zkpipe/zkpipe/internal/zkpipebin"
	"github.com/zkpipe/zkpipe/stream"
)

// The tests here run the zkpipe command as a process over testdata's mul
// circuit (a public, b private, c = a²⁰·b public; a = 0 is rejected), with
// snarkjs as the independent verifier.

// proveRun is one finished zkpipe prove: its result lines by id, its exit
// code, its stderr and the child's peak RSS.
type proveRun struct {
	results map[string]stream.Result
	code    int
	stderr  string
	maxRSS  int64 // bytes, the child's own peak (peakrss)
}

// prove runs zkpipe prove over jobs (one JSON line each) with args, and
// waits for it.
func prove(t *testing.T, dir string, jobs []string, args ...string) proveRun {
	t.Helper()
	bin := zkpipebin.Path(t, "runs zkpipe prove as a process")
	jobsFile, results := filepath.Join(dir, "jobs.jsonl"), filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(jobsFile, []byte(strings.Join(jobs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"prove", "--device", "cpu", "--mem-status", "0",
		"--jobs", jobsFile, "--out", filepath.Join(dir, "out"), "--results", results}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	rss, err := peakrss.Run(cmd)
	r := proveRun{results: map[string]stream.Result{}, stderr: stderr.String(), maxRSS: rss}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	r.results = readResults(t, results)
	return r
}

func readResults(t *testing.T, path string) map[string]stream.Result {
	t.Helper()
	out := map[string]stream.Result{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l stream.Result
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("result line %q: %v", sc.Text(), err)
		}
		out[l.ID] = l
	}
	return out
}

func tdPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkProved checks that job id proved, that snarkjs groth16 verify and
// zkpipe's own verifier accept its files, and returns its public.json.
func checkProved(t *testing.T, r proveRun, id string) []string {
	t.Helper()
	l, ok := r.results[id]
	if !ok || l.Error != "" || l.Proof == "" {
		t.Errorf("%s: %+v, want proved", id, l)
		return nil
	}
	vkey := tdPath(t, "mul.vkey.json")
	if !snarkjsVerify(t, vkey, l.Public, l.Proof) {
		t.Errorf("%s: snarkjs groth16 verify rejects a proof zkpipe said proved", id)
	}
	vk, err := ReadVerifyingKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyFiles(t.Context(), vk, l.Proof, l.Public); err != nil {
		t.Errorf("%s: zkpipe verify: %v", id, err)
	}
	var pub []string
	data, err := os.ReadFile(l.Public)
	if err == nil {
		err = json.Unmarshal(data, &pub)
	}
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pub) != fmt.Sprint(l.PublicInputs) {
		t.Errorf("%s: the result line says public inputs %v, public.json holds %v", id, l.PublicInputs, pub)
	}
	return pub
}

// snarkjsPublic is the public.json snarkjs writes for input on mul:
// snarkjs wtns calculate, then snarkjs groth16 prove.
func snarkjsPublic(t *testing.T, dir, id, input string) []string {
	t.Helper()
	in := filepath.Join(dir, id+".input.json")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	w, proof, public := filepath.Join(dir, id+".wtns"), filepath.Join(dir, id+".sj.proof.json"), filepath.Join(dir, id+".sj.public.json")
	run(t, dir, "snarkjs", "wtns", "calculate", tdPath(t, "mul.wasm"), in, w)
	run(t, dir, "snarkjs", "groth16", "prove", tdPath(t, "mul.zkey"), w, proof, public)
	var pub []string
	data, err := os.ReadFile(public)
	if err == nil {
		err = json.Unmarshal(data, &pub)
	}
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// snarkjsRefuses tells whether snarkjs wtns calculate refuses input.
func snarkjsRefuses(t *testing.T, dir, id, input string) bool {
	t.Helper()
	in := filepath.Join(dir, id+".input.json")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(tools(t), "snarkjs"), "wtns", "calculate", tdPath(t, "mul.wasm"), in, filepath.Join(dir, id+".wtns"))
	return cmd.Run() != nil
}

// TestInputValuesAreCanonicalFieldElements: circom inputs are reduced to
// field elements as snarkjs's witness calculator does (BigInt(n) mod p,
// plus p when negative), so public.json holds what snarkjs writes for the
// same input, and snarkjs and zkpipe verify accept it: negative values
// (−3 is p − 3, which gnark-crypto prints as "-3"), values of p and above,
// hex, octal and binary strings, JSON numbers, huge values. What snarkjs
// refuses is refused, with an error naming the signal; a JSON number that
// JavaScript would round is refused rather than proven as another value.
func TestInputValuesAreCanonicalFieldElements(t *testing.T) {
	p := fr.Modulus()
	dec := func(x *big.Int) string { return x.String() }
	add := func(k int64) string { return dec(new(big.Int).Add(p, big.NewInt(k))) }
	huge := new(big.Int).Exp(big.NewInt(10), big.NewInt(300), nil)
	good := map[string]string{
		"neg3":      `{"a":"-3","b":"11"}`,
		"neg1":      `{"a":"-1","b":"-1"}`,
		"neg65535":  `{"a":"-65535","b":"2"}`,
		"neg65536":  `{"a":"-65536","b":"2"}`,
		"negnum":    `{"a":-3,"b":11}`,
		"hex":       `{"a":"0x3","b":"0XfF"}`,
		"octbin":    `{"a":"0o17","b":"0b101"}`,
		"pplus3":    fmt.Sprintf(`{"a":"%s","b":"11"}`, add(3)),
		"pminus1":   fmt.Sprintf(`{"a":"%s","b":"11"}`, add(-1)),
		"bisp":      fmt.Sprintf(`{"a":"5","b":"%s"}`, dec(p)),
		"p2plus7":   fmt.Sprintf(`{"a":"%s","b":"1"}`, dec(new(big.Int).Add(new(big.Int).Mul(p, p), big.NewInt(7)))),
		"hugeneg":   fmt.Sprintf(`{"a":"-%s","b":"1"}`, dec(huge)),
		"hexp":      fmt.Sprintf(`{"a":"0x%s","b":"1"}`, new(big.Int).Add(p, big.NewInt(2)).Text(16)),
		"space":     `{"a":" 12 ","b":"+4"}`,
		"numexp":    `{"a":1e3,"b":2.0}`,
		"array":     `{"a":["-2"],"b":[["3"]]}`,
		"plusminus": `{"a":"-0","b":"7"}`, // a = 0: the circuit's assert refuses it
	}
	refused := map[string]struct{ input, err string }{
		"neghex":    {`{"a":"-0x3","b":"1"}`, "not an integer"},
		"underscor": {`{"a":"1_000","b":"1"}`, "not an integer"},
		"expstring": {`{"a":"1e3","b":"1"}`, "not an integer"},
		"fraction":  {`{"a":1.5,"b":"1"}`, "not an integer"},
		"word":      {`{"a":"abc","b":"1"}`, "not an integer"},
		"null":      {`{"a":null,"b":"1"}`, "got null"},
		"infinity":  {`{"a":1e400,"b":"1"}`, "beyond a JavaScript number"},
	}
	dir := t.TempDir()
	var jobs []string
	for id, in := range good {
		jobs = append(jobs, fmt.Sprintf(`{"id":%q,"circuit":"mul","input":%s}`, id, in))
	}
	for id, c := range refused {
		jobs = append(jobs, fmt.Sprintf(`{"id":%q,"circuit":"mul","input":%s}`, id, c.input))
	}
	// 12345678901234567890123 is 12345678901234567741440 to JavaScript
	jobs = append(jobs, `{"id":"rounded","circuit":"mul","input":{"a":12345678901234567890123,"b":"1"}}`)
	r := prove(t, dir, jobs, "--zkey", tdPath(t, "mul.zkey"), "--wasm", tdPath(t, "mul.wasm"))
	if r.code != 2 {
		t.Errorf("exit code %d, want 2 (not every job proven)", r.code)
	}
	for id, in := range good {
		if id == "plusminus" {
			if l := r.results[id]; !strings.Contains(l.Error, "assert failed") {
				t.Errorf("%s (a = 0): %+v, want the circuit's assert", id, l)
			}
			continue
		}
		got := checkProved(t, r, id)
		if want := snarkjsPublic(t, dir, id, in); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: public.json %v, snarkjs writes %v", id, got, want)
		}
	}
	for id, c := range refused {
		l := r.results[id]
		if l.Proof != "" || !strings.Contains(l.Error, "input a") || !strings.Contains(l.Error, c.err) {
			t.Errorf("%s: %+v, want refused naming input a: %s", id, l, c.err)
		}
		if !snarkjsRefuses(t, dir, id, c.input) {
			t.Errorf("%s: snarkjs takes %s, zkpipe refuses it", id, c.input)
		}
	}
	if l := r.results["rounded"]; l.Proof != "" || !strings.Contains(l.Error, "12345678901234567741440") {
		t.Errorf("a JSON number JavaScript rounds: %+v, want refused, naming the rounded value", l)
	}
}
