package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/circuits"
)

// unchanged fails the test if the file at path no longer holds want.
func unchanged(t *testing.T, path string, want []byte) {
	t.Helper()
	if got, err := os.ReadFile(path); err != nil || string(got) != string(want) {
		t.Errorf("%s was changed (%v): %d bytes, had %d", path, err, len(got), len(want))
	}
}

// An output that is one of the run's inputs is refused before anything is
// written: --results naming the jobs file (by its path, another spelling,
// a symlink, a hard link), a circuit file or a circom key, or a file zkpipe
// writes in --out; and an input that is a file zkpipe writes in --out.
func TestOutputsThatAreInputsAreRefused(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	zkey := filepath.Join(root, "mul.zkey")
	zdata, _ := os.ReadFile(filepath.Join(td, "mul.zkey"))
	if err := os.WriteFile(zkey, zdata, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, generateJobs(2)...)
	jdata, _ := os.ReadFile(jobs)
	link, hard := filepath.Join(root, "link.jsonl"), filepath.Join(root, "hard.jsonl")
	if err := os.Symlink(jobs, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(jobs, hard); err != nil {
		t.Fatal(err)
	}
	vk := filepath.Join(chain, "circuit.vk")
	vkdata, _ := os.ReadFile(vk)
	vklink := filepath.Join(root, "vk-link")
	if err := os.Symlink(vk, vklink); err != nil {
		t.Fatal(err)
	}
	jobsInOut := filepath.Join(out, "x.public")
	writeJobs(t, jobsInOut, generateJobs(1)...)

	gnark := []string{"zkpipe", "prove", "--device", "cpu", "--circuit", chain, "--out", out, "--mem-status", "0"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"--results is --jobs", append(gnark, "--jobs", jobs, "--results", jobs), "is --jobs"},
		{"--results is --jobs spelt ./", append(gnark, "--jobs", jobs, "--results", filepath.Join(root, ".", "..", filepath.Base(root), "jobs.jsonl")), "is --jobs"},
		{"--results is a symlink to --jobs", append(gnark, "--jobs", jobs, "--results", link), "is --jobs"},
		{"--results is a hard link to --jobs", append(gnark, "--jobs", jobs, "--results", hard), "is --jobs"},
		{"--results is a circuit file (symlink)", append(gnark, "--jobs", jobs, "--results", vklink), "is the --circuit file"},
		{"--results is the --zkey", []string{"zkpipe", "prove", "--device", "cpu", "--zkey", zkey, "--jobs", jobs, "--out", out, "--results", zkey}, "is --zkey"},
		{"--results is a proof zkpipe writes in --out", append(gnark, "--jobs", jobs, "--results", filepath.Join(out, "j1.proof")), "writes in --out"},
		{"--results is the lock of --out", append(gnark, "--jobs", jobs, "--results", filepath.Join(out, ".zkpipe.lock")), "writes in --out"},
		{"--jobs is a file zkpipe writes in --out", append(gnark, "--jobs", jobsInOut), "writes in --out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := App().Run(c.args)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
			unchanged(t, jobs, jdata)
			unchanged(t, vk, vkdata)
			unchanged(t, zkey, zdata)
			if _, err := os.Stat(filepath.Join(out, "j1.proof")); err == nil {
				t.Error("a job was proven")
			}
		})
	}
	// results --results naming its --jobs: refused before the queue is
	// reached
	err = App().Run([]string{"zkpipe", "results", "--nats", "nats://127.0.0.1:1", "--jobs", jobs, "--results", link, "--out", out})
	if err == nil || !strings.Contains(err.Error(), "is --jobs") {
		t.Errorf("results --results naming --jobs: %v", err)
	}
	unchanged(t, jobs, jdata)

	// Only a regular file clashes: /dev/null as both jobs and results
	// truncates nothing (a daemon's stdin and its discarded results)
	if err := App().Run([]string{"zkpipe", "prove", "--device", "cpu", "--circuit", chain, "--out", filepath.Join(root, "out2"),
		"--mem-status", "0", "--jobs", os.DevNull, "--results", os.DevNull}); err != nil {
		t.Errorf("--jobs /dev/null --results /dev/null: %v", err)
	}
}

// Stdin redirected from the jobs file, --results naming that file: refused
// (a real process, its stdin the file).
func TestResultsIsStdinsFile(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, generateJobs(2)...)
	jdata, _ := os.ReadFile(jobs)
	f, err := os.Open(jobs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "prove", "--device", "cpu", "--circuit", chain, "--jobs", "-", "--out", filepath.Join(root, "out"), "--results", jobs)
	cmd.Stdin = f
	o, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(o), "is --jobs - (stdin)") {
		t.Errorf("exit %v: %s", err, o)
	}
	unchanged(t, jobs, jdata)
}

// A job whose witness is a file the run writes (the results file, by a
// hard link or a symlink; a file zkpipe writes in --out) fails alone,
// naming the clash; the other jobs are proven.
func TestWitnessThatIsAnOutputFailsItsJob(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	out := filepath.Join(root, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(root, "r.jsonl")
	if err := os.WriteFile(results, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hard, sym := filepath.Join(root, "hard.wit"), filepath.Join(root, "sym.wit")
	if err := os.Link(results, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(results, sym); err != nil {
		t.Fatal(err)
	}
	mc, _ := circuits.Lookup("mulchain")
	inOut := filepath.Join(out, "good.public") // job good writes it
	writeWitness(t, inOut, mc.Assignment(100, 1))
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs,
		fmt.Sprintf(`{"id":"hard","witness":%q}`, hard),
		fmt.Sprintf(`{"id":"sym","witness":%q}`, sym),
		fmt.Sprintf(`{"id":"inout","witness":%q}`, inOut),
		`{"id":"good","generate":{"seed":1}}`)
	lines := byID(runProve(t, results, "zkpipe", "prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs, "--out", out, "--results", results))
	for id, want := range map[string]string{"hard": "is --results", "sym": "is --results", "inout": "a file this run writes in --out"} {
		if l := lines[id]; !strings.Contains(l.Error, want) || !strings.Contains(l.Error, "job "+id) {
			t.Errorf("%s: error %q, want it to name the job and say %q", id, l.Error, want)
		}
	}
	if l := lines["good"]; l.Error != "" {
		t.Errorf("good: %s", l.Error)
	}
}

// bench --results or --cpuprofile naming a circuit file, and timeline -o
// naming its own input (spelt otherwise): refused, the file intact.
func TestOtherCommandsRefuseOutputsThatAreInputs(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 50)
	pk := filepath.Join(chain, "circuit.pk")
	pkdata, _ := os.ReadFile(pk)
	err := App().Run([]string{"zkpipe", "bench", "--device", "cpu", "--circuit", chain, "-n", "1", "--skip-gnark", "--results", pk})
	if err == nil || !strings.Contains(err.Error(), "is the --circuit file") {
		t.Errorf("bench --results circuit.pk: %v", err)
	}
	// --cpuprofile P writes P.zkpipe: a circuit file of that name
	prof := filepath.Join(chain, "circuit")
	if err := os.Link(pk, prof+".zkpipe"); err != nil {
		t.Fatal(err)
	}
	err = App().Run([]string{"zkpipe", "bench", "--device", "cpu", "--circuit", chain, "-n", "1", "--skip-gnark", "--cpuprofile", prof})
	if err == nil || !strings.Contains(err.Error(), "--cpuprofile "+prof+".zkpipe is the --circuit file") {
		t.Errorf("bench --cpuprofile onto a circuit file: %v", err)
	}
	unchanged(t, pk, pkdata)

	results := filepath.Join(root, "r.jsonl")
	rdata := []byte(`{"id":"a","stages":[],"total_ms":1}` + "\n")
	if err := os.WriteFile(results, rdata, 0o644); err != nil {
		t.Fatal(err)
	}
	same := root + "/./r.jsonl" // the same file, spelt otherwise: replaced by the picture
	err = App().Run([]string{"zkpipe", "timeline", results, "-o", same})
	if err == nil || !strings.Contains(err.Error(), "is the results file") {
		t.Errorf("timeline -o its own input: %v", err)
	}
	unchanged(t, results, rdata)
}

// zkpipe export solidity --contract naming a file of its --circuit
// directory (circuit.pk, circuit.vk, circuit.r1cs, circuit.json,
// hash-to-field, there or not yet), by its path, another spelling, a
// /proc/self/cwd/… path, a hard link or a symlink, or naming the
// directory itself, is refused before anything is read or written (a real
// process, exit non-zero), every file as it was; a contract elsewhere is
// written.
func TestExportRefusesAContractOverItsCircuit(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	dir := setupCircuit(t, root, "chain", "mulchain", 50)
	files := []string{"circuit.pk", "circuit.vk", "circuit.r1cs", "circuit.json"}
	before := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	hard, sym := filepath.Join(root, "hard.sol"), filepath.Join(root, "sym.sol")
	if err := os.Link(filepath.Join(dir, "circuit.pk"), hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "circuit.vk"), sym); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(root, "dangling.sol") // to a hash-to-field the directory lacks
	if err := os.Symlink(filepath.Join(dir, "hash-to-field"), dangling); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "hash-to-field"))
	run := func(contract string) (int, string) {
		cmd := exec.Command(bin, "export", "solidity", "--circuit", dir, "--contract", contract)
		cmd.Dir = root
		var stderr strings.Builder
		cmd.Stderr = &stderr
		return exitCode(t, cmd), stderr.String()
	}
	for _, c := range []struct{ contract, want string }{
		{filepath.Join(dir, "circuit.pk"), "refusing to overwrite an input"},
		{filepath.Join(dir, "circuit.vk"), "refusing to overwrite an input"},
		{filepath.Join(dir, "circuit.r1cs"), "refusing to overwrite an input"},
		{filepath.Join(dir, "circuit.json"), "refusing to overwrite an input"},
		{filepath.Join(dir, "hash-to-field"), "refusing to overwrite an input"},
		{filepath.Join(dir, "..", "chain", ".", "circuit.vk"), "refusing to overwrite an input"},
		{"/proc/self/cwd/chain/circuit.pk", "refusing to overwrite an input"},
		{"/proc/self/cwd/chain/hash-to-field", "refusing to overwrite an input"},
		{"chain/circuit.vk", "refusing to overwrite an input"},
		{hard, "refusing to overwrite an input"},
		{sym, "refusing to overwrite an input"},
		{dangling, "refusing to overwrite an input"},
		{dir, "is a directory"},
		{filepath.Join(root, "none", "Verifier.sol"), "no such file or directory"},
	} {
		code, stderr := run(c.contract)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("--contract %s: exit %d, %q; want it refused saying %q", c.contract, code, stderr, c.want)
		}
		for _, f := range files {
			unchanged(t, filepath.Join(dir, f), before[f])
		}
		if _, err := os.Stat(filepath.Join(dir, "hash-to-field")); err == nil {
			t.Fatalf("--contract %s: a hash-to-field was made in the circuit directory", c.contract)
		}
	}
	good := filepath.Join(root, "Verifier.sol")
	if code, stderr := run(good); code != 0 {
		t.Fatalf("--contract %s: exit %d: %s", good, code, stderr)
	}
	if b, err := os.ReadFile(good); err != nil || !strings.Contains(string(b), "pragma solidity") {
		t.Fatalf("the contract: %v, %.80q", err, b)
	}
}
