package commands

import (
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/bench"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// verifyResults checks every result line of a results file with gnark's
// groth16.Verify against the verifying key of its circuit's directory, and
// returns the lines' ids in the file's order.
func verifyResults(t *testing.T, results string, dirs map[string]string) []string {
	t.Helper()
	lines, err := stream.ReadResultsFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range lines {
		ids = append(ids, l.ID)
		dir, ok := dirs[l.Circuit]
		if !ok {
			t.Errorf("job %s: circuit %q", l.ID, l.Circuit)
			continue
		}
		vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Errorf("job %s (%s): gnark rejects its proof: %v", l.ID, l.Circuit, err)
		}
	}
	return ids
}

// twoChains makes two mulchain circuits, chain and wide, a witness file of
// each, and a jobs file that mixes them (generate and witness jobs, a
// blank line); it returns the jobs file and the circuits by name.
func twoChains(t *testing.T, root string) (string, map[string]string) {
	t.Helper()
	chain := setupCircuit(t, root, "chain", "mulchain", 40)
	wide := setupCircuit(t, root, "wide", "mulchain", 90)
	mc, _ := circuits.Lookup("mulchain")
	writeWitness(t, filepath.Join(root, "chain.wit"), mc.Assignment(40, 7))
	writeWitness(t, filepath.Join(root, "wide.wit"), mc.Assignment(90, 8))
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs,
		`{"id":"c1","circuit":"chain","generate":{"seed":1}}`,
		fmt.Sprintf(`{"id":"w1","circuit":"wide","witness":%q}`, filepath.Join(root, "wide.wit")),
		``,
		fmt.Sprintf(`{"id":"c2","circuit":"chain","witness":%q}`, filepath.Join(root, "chain.wit")),
		`{"id":"w2","circuit":"wide","generate":{"seed":2}}`)
	return jobs, map[string]string{"chain": chain, "wide": wide}
}

// rowOf is the proofs column of circuit name's row in bench's circuit table.
func rowOf(output, name string) string {
	m := regexp.MustCompile(`(?m)^` + name + `\s+(\d+)\s+[0-9.]+\s`).FindStringSubmatch(output)
	if m == nil {
		return ""
	}
	return m[1]
}

// bench --jobs over two circuits benches every job of the file (zkpipe's
// stream, then gnark's groth16.Prove of the same jobs), and reports both
// circuits, in total and each alone; -n takes the first n jobs, or cycles
// the file with ids ID.2, ID.3…. Every proof zkpipe wrote is accepted by
// gnark's groth16.Verify here.
func TestBenchJobsTwoCircuits(t *testing.T) {
	root := t.TempDir()
	jobs, dirs := twoChains(t, root)
	args := []string{"--circuit", dirs["chain"], "--circuit", dirs["wide"], "--jobs", jobs}

	results, out := filepath.Join(root, "all.jsonl"), filepath.Join(root, "out")
	code, output := benchBin(t, nil, append(args, "--results", results, "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, output)
	}
	for _, want := range []string{
		"4 jobs over 2 circuits, 4 proofs (all of them)",
		"chain (gnark): 40 constraints", "wide (gnark): 90 constraints",
		"zkpipe stream:       4 proofs", "all verified",
		"gnark groth16.Prove: 4 proofs", "ratio zkpipe/gnark:",
		"gnark ms/proof", "all circuits:\nstage", "circuit chain:\nstage", "circuit wide:\nstage",
	} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}
	if c, w := rowOf(output, "chain"), rowOf(output, "wide"); c != "2" || w != "2" {
		t.Errorf("circuit table: chain %q, wide %q proofs; want 2 and 2:\n%s", c, w, output)
	}
	ids := verifyResults(t, results, dirs)
	if len(ids) != 4 {
		t.Errorf("results %v, want the 4 jobs", ids)
	}
	if proofs, _ := filepath.Glob(filepath.Join(out, "*.proof")); len(proofs) != 4 {
		t.Errorf("%d proofs in --out, want 4", len(proofs))
	}

	// -n past the file cycles it; before its end, takes its first jobs.
	// Without --out the proofs go to a temporary directory, removed after.
	for n, want := range map[int]struct {
		how         string
		chain, wide string
		ids         []string
		out         bool
	}{
		7: {"the file 2 times over, its repeats with ids ID.2, ID.3, …", "4", "3", []string{"c1", "w1", "c2", "w2", "c1.2", "w1.2", "c2.2"}, true},
		1: {"the first 1", "1", "", []string{"c1"}, false},
	} {
		results := filepath.Join(root, fmt.Sprintf("n%d.jsonl", n))
		more := []string{"-n", fmt.Sprint(n), "--skip-gnark", "--results", results}
		if want.out {
			more = append(more, "--out", filepath.Join(root, fmt.Sprintf("out%d", n)))
		}
		code, output := benchBin(t, nil, append(args, more...)...)
		if code != 0 {
			t.Fatalf("-n %d: exit %d:\n%s", n, code, output)
		}
		if !strings.Contains(output, fmt.Sprintf("%d proofs (%s)", n, want.how)) || !strings.Contains(output, "comparison: none (--skip-gnark)") {
			t.Errorf("-n %d: output:\n%s", n, output)
		}
		if c, w := rowOf(output, "chain"), rowOf(output, "wide"); c != want.chain || w != want.wide {
			t.Errorf("-n %d: circuit table: chain %q, wide %q proofs; want %q and %q:\n%s", n, c, w, want.chain, want.wide, output)
		}
		if !want.out {
			lines, err := stream.ReadResultsFile(results)
			if err != nil || len(lines) != n {
				t.Fatalf("-n %d: %d result lines (%v)", n, len(lines), err)
			}
			if _, err := os.Stat(lines[0].Proof); !strings.Contains(lines[0].Proof, "zkpipe-bench-") || !os.IsNotExist(err) {
				t.Errorf("-n %d without --out: proof %s left behind (%v)", n, lines[0].Proof, err)
			}
			continue
		}
		ids := verifyResults(t, results, dirs)
		if got, w := fmt.Sprint(sortedCopy(ids)), fmt.Sprint(sortedCopy(want.ids)); got != w {
			t.Errorf("-n %d: result ids %s, want %s", n, got, w)
		}
	}
}

// sortedCopy is s sorted: result lines come in the order jobs finish.
func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// A bench --jobs fails, naming the file and the line, on a line that is
// not a job or names a circuit not given; a job that fails makes the bench
// fail with its id and error; flags that give witnesses beside --jobs are
// a usage error (exit 2).
func TestBenchJobsErrors(t *testing.T) {
	root := t.TempDir()
	jobs, dirs := twoChains(t, root)
	both := []string{"--circuit", dirs["chain"], "--circuit", dirs["wide"]}
	file := func(name string, lines ...string) string {
		p := filepath.Join(root, name)
		writeJobs(t, p, lines...)
		return p
	}
	mc, _ := circuits.Lookup("mulchain")
	unsat := mc.Assignment(40, 3).(*circuits.MulChain)
	unsat.Y = new(big.Int).Add(unsat.Y.(*big.Int), big.NewInt(1))
	writeWitness(t, filepath.Join(root, "unsat.wit"), unsat)

	bad := file("bad.jsonl", `{"id":"a","circuit":"chain","generate":{"seed":1}}`, `{"id":"b" "circuit"}`)
	unknown := file("unknown.jsonl", `{"id":"a","circuit":"chain","generate":{"seed":1}}`, ``, `{"id":"x","circuit":"nope","generate":{"seed":1}}`)
	unnamed := file("unnamed.jsonl", `{"id":"a","generate":{"seed":1}}`)
	failing := file("failing.jsonl", `{"id":"ok","circuit":"chain","generate":{"seed":1}}`, fmt.Sprintf(`{"id":"bad1","circuit":"chain","witness":%q}`, filepath.Join(root, "unsat.wit")))
	twin := setupCircuit(t, filepath.Join(root, "other"), "chain", "mulchain", 30)
	clash := file("clash.jsonl", `{"id":"a","circuit":"chain","generate":{"seed":1}}`, `{"id":"a.2","circuit":"chain","generate":{"seed":2}}`)
	// refused: before any job is proven (every case but the failing job)
	cases := []struct {
		args    []string
		code    int
		want    []string
		refused bool
	}{
		{append(both, "--jobs", bad), 1, []string{"--jobs " + bad + ": line 2: malformed job"}, true},
		{append(both, "--jobs", unknown), 1, []string{"--jobs " + unknown + ": line 3: job \"x\" names circuit \"nope\", which is not loaded (loaded: chain, wide)"}, true},
		{append(both, "--jobs", unnamed), 1, []string{"line 1: job \"a\" names no circuit, and 2 are loaded"}, true},
		{append(both, "--jobs", failing, "--skip-gnark"), 1, []string{"--jobs " + failing + " line 2: zkpipe job bad1", "unsatisfied"}, false},
		{append(both, "--jobs", clash, "-n", "3"), 1, []string{"line 1: job \"a\" cannot be repeated for -n 3", "is the id of line 2"}, true},
		{[]string{"--circuit", dirs["chain"], "--circuit", twin, "--jobs", jobs}, 1, []string{`two circuits named "chain"`}, true},
		{append(both, "--jobs", jobs, "--results", jobs), 1, []string{"refusing to overwrite an input"}, true},
		{append(both, "--jobs", "-"), 1, []string{"--jobs -: bench reads the jobs twice"}, true},
		{append(both, "--jobs", jobs, "--witness", filepath.Join(root, "chain.wit")), 2, []string{"--jobs FILE names each job's witness: give no --witness, --wtns or --input"}, true},
		{append(both, "--jobs", jobs, "--wtns", filepath.Join(root, "chain.wit")), 2, []string{"give no --witness, --wtns or --input"}, true},
		{append(both, "--jobs", jobs, "--input", filepath.Join(root, "chain.wit")), 2, []string{"give no --witness, --wtns or --input"}, true},
		{append(both, "--jobs", jobs, "--serial-cpu", "2"), 2, []string{"--serial-cpu is for one gnark --circuit"}, true},
		{[]string{"--jobs", jobs}, 2, []string{"give the circuits its jobs name"}, true},
		{both, 2, []string{"(several only with --jobs FILE)"}, true},
	}
	for _, c := range cases {
		out := filepath.Join(root, "out")
		os.RemoveAll(out)
		code, output := benchBin(t, nil, append(c.args, "--out", out)...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d:\n%s", c.args, code, c.code, output)
		}
		for _, w := range c.want {
			if !strings.Contains(output, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, output)
			}
		}
		if c.refused {
			if proofs, _ := filepath.Glob(filepath.Join(out, "*.proof")); len(proofs) > 0 {
				t.Errorf("%v: refused, yet %d proofs in --out", c.args, len(proofs))
			}
		}
	}
}

// A jobs file of more than bench.MaxProofs jobs is refused before any key
// is loaded or any job proven, naming its file and the first line past the
// bound.
func TestBenchJobsBounded(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 40)
	var lines []string
	for i := range bench.MaxProofs + 1 {
		lines = append(lines, fmt.Sprintf(`{"id":"j%d","generate":{"seed":%d}}`, i, i))
	}
	jobs := filepath.Join(root, "many.jsonl")
	writeJobs(t, jobs, lines...)
	out := filepath.Join(root, "out")
	code, output := benchBin(t, nil, "--circuit", chain, "--jobs", jobs, "--out", out)
	want := fmt.Sprintf("--jobs %s: line %d: more than %d jobs", jobs, bench.MaxProofs+1, bench.MaxProofs)
	if code != 1 || !strings.Contains(output, want) {
		t.Errorf("exit %d, want 1 and %q:\n%s", code, want, output)
	}
	if strings.Contains(output, "bench: --jobs") {
		t.Errorf("the bench started:\n%s", output)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out made or touched: %v", err)
	}
}

// bench --jobs over a gnark circuit and a circom zkey (a .wtns job and an
// input job, circomsrc's testdata): both are benched; gnark's comparison
// covers the gnark jobs, and no ratio is given since gnark does not prove
// the circom ones. snarkjs groth16 verify accepts every circom proof.
func TestBenchJobsGnarkAndCircom(t *testing.T) {
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	sj := snarkjs(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 40)
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs,
		`{"id":"g1","circuit":"chain","generate":{"seed":1}}`,
		fmt.Sprintf(`{"id":"m1","circuit":"mul","wtns":%q}`, filepath.Join(td, "mul.wtns")),
		`{"id":"m2","circuit":"mul","input":{"a":"7","b":"2"}}`)
	out := filepath.Join(root, "out")
	code, output := benchBin(t, nil, "--circuit", chain, "--zkey", filepath.Join(td, "mul.zkey"), "--wasm", filepath.Join(td, "mul.wasm"), "--jobs", jobs, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, output)
	}
	for _, want := range []string{"3 jobs over 2 circuits", "mul (circom):", "gnark groth16.Prove: 1 proofs", "ratio zkpipe/gnark:  none (2 of the 3 jobs are circom's"} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}
	if c, m := rowOf(output, "chain"), rowOf(output, "mul"); c != "1" || m != "2" {
		t.Errorf("circuit table: chain %q, mul %q proofs; want 1 and 2:\n%s", c, m, output)
	}
	for _, id := range []string{"m1", "m2"} {
		proof, pub := filepath.Join(out, id+".proof.json"), filepath.Join(out, id+".public.json")
		if o, err := exec.Command(sj, "groth16", "verify", filepath.Join(td, "mul.vkey.json"), pub, proof).CombinedOutput(); err != nil || !strings.Contains(string(o), "OK!") {
			t.Errorf("snarkjs rejects %s: %v\n%s", proof, err, o)
		}
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(chain, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := gnarksrc.VerifyFiles(vk, filepath.Join(out, "g1.proof"), filepath.Join(out, "g1.public")); err != nil {
		t.Errorf("gnark rejects g1: %v", err)
	}
}
