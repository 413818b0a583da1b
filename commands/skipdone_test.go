package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// copyOutputs puts job from's files in out under job to's name, as a user
// (or an attacker) copying one job's outputs over another's would.
func copyOutputs(t *testing.T, out, from, to string, suffixes ...string) {
	t.Helper()
	for _, s := range suffixes {
		data, err := os.ReadFile(filepath.Join(out, from+s))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, to+s), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func byID(lines []stream.Result) map[string]stream.Result {
	m := map[string]stream.Result{}
	for _, l := range lines {
		m[l.ID] = l
	}
	return m
}

// --skip-done over outputs where job b's valid proof and public file were
// copied under job a's name: a is proven again (its own public inputs, a
// proof gnark accepts), never resumed; b, whose files are its own, is
// resumed. Witness-file jobs and generate jobs both.
func TestSkipDoneBindsStoredProofToTheJobsWitness(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	out := filepath.Join(root, "out")
	mc, _ := circuits.Lookup("mulchain")
	writeWitness(t, filepath.Join(root, "a.wit"), mc.Assignment(100, 1))
	writeWitness(t, filepath.Join(root, "b.wit"), mc.Assignment(100, 2))
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs,
		fmt.Sprintf(`{"id":"a","witness":%q}`, filepath.Join(root, "a.wit")),
		fmt.Sprintf(`{"id":"b","witness":%q}`, filepath.Join(root, "b.wit")),
		`{"id":"c","generate":{"seed":3}}`,
		`{"id":"d","generate":{"seed":4}}`)
	results := filepath.Join(root, "r.jsonl")
	args := []string{"zkpipe", "prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs, "--out", out, "--results", results, "--mem-status", "0"}
	first := byID(runProve(t, results, args...))
	for _, id := range []string{"a", "b", "c", "d"} {
		if first[id].Error != "" {
			t.Fatalf("first run: %s: %s", id, first[id].Error)
		}
	}
	if slices.Equal(first["a"].PublicInputs, first["b"].PublicInputs) || slices.Equal(first["c"].PublicInputs, first["d"].PublicInputs) {
		t.Fatal("the test needs jobs of different public inputs")
	}
	copyOutputs(t, out, "b", "a", ".proof", ".public", ".proof.json")
	copyOutputs(t, out, "d", "c", ".proof", ".public", ".proof.json")

	var log strings.Builder
	second := byID(runProveTo(t, &log, results, append(args, "--skip-done")...))
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(chain, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for id, resumed := range map[string]bool{"a": false, "b": true, "c": false, "d": true} {
		l := second[id]
		if l.Error != "" || l.Resumed != resumed {
			t.Errorf("%s: resumed %v, error %q; want resumed %v", id, l.Resumed, l.Error, resumed)
		}
		if !slices.Equal(l.PublicInputs, first[id].PublicInputs) {
			t.Errorf("%s: public inputs %v, its witness has %v", id, l.PublicInputs, first[id].PublicInputs)
		}
		if err := gnarksrc.VerifyFiles(vk, l.Proof, l.Public); err != nil {
			t.Errorf("%s: gnark rejects the files: %v", id, err)
		}
		// the files on disk are the job's own now
		pub, err := gnarksrc.ReadPublicInputs(t.Context(), filepath.Join(out, id+".public"), boundedread.Options{})
		if err != nil || !slices.Equal(pub, first[id].PublicInputs) {
			t.Errorf("%s: %s.public holds %v (%v), want %v", id, id, pub, err, first[id].PublicInputs)
		}
	}
	for _, id := range []string{"a", "c"} {
		if !strings.Contains(log.String(), "job "+id+": the earlier run's") || !strings.Contains(log.String(), "other public inputs") {
			t.Errorf("no warning for %s's stale files:\n%s", id, log.String())
		}
	}
}

// The circom side: a wtns job whose files are another job's is proven
// again; an input job is always proven again under --skip-done (its public
// inputs are known only once the wasm has computed its witness), even
// over its own valid files.
func TestSkipDoneBindsCircomJobs(t *testing.T) {
	td, err := filepath.Abs("../source/circomsrc/testdata")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, "out")
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs,
		fmt.Sprintf(`{"id":"w","wtns":%q}`, filepath.Join(td, "mul.wtns")),
		fmt.Sprintf(`{"id":"w2","wtns":%q}`, filepath.Join(td, "mul.wtns")),
		`{"id":"i","input":{"a":"7","b":"2"}}`)
	results := filepath.Join(root, "r.jsonl")
	args := []string{"zkpipe", "prove", "--device", "cpu", "--zkey", filepath.Join(td, "mul.zkey"), "--wasm", filepath.Join(td, "mul.wasm"),
		"--jobs", jobs, "--out", out, "--results", results, "--mem-status", "0"}
	first := byID(runProve(t, results, args...))
	for _, id := range []string{"w", "w2", "i"} {
		if first[id].Error != "" {
			t.Fatalf("first run: %s: %s", id, first[id].Error)
		}
	}
	if slices.Equal(first["w"].PublicInputs, first["i"].PublicInputs) {
		t.Fatal("the test needs jobs of different public inputs")
	}
	copyOutputs(t, out, "i", "w", ".proof.json", ".public.json")
	var log strings.Builder
	second := byID(runProveTo(t, &log, results, append(args, "--skip-done")...))
	vkey := filepath.Join(td, "mul.vkey.json")
	for id, resumed := range map[string]bool{"w": false, "w2": true, "i": false} {
		l := second[id]
		if l.Error != "" || l.Resumed != resumed {
			t.Errorf("%s: resumed %v, error %q; want resumed %v", id, l.Resumed, l.Error, resumed)
		}
		if !slices.Equal(l.PublicInputs, first[id].PublicInputs) {
			t.Errorf("%s: public inputs %v, its witness has %v", id, l.PublicInputs, first[id].PublicInputs)
		}
		if err := App().Run([]string{"zkpipe", "verify", "--vkey", vkey, l.Proof, l.Public}); err != nil {
			t.Errorf("%s: zkpipe verify: %v", id, err)
		}
	}
	if !strings.Contains(log.String(), "job w: the earlier run's") || !strings.Contains(log.String(), "job i: its public inputs are known only once") {
		t.Errorf("log does not say why w and i were proven again:\n%s", log.String())
	}
}

// --skip-done checks every output a job leaves, not only its proof and
// public witness: a job whose ID.proof.json is another job's, garbage, or
// missing is proven again (its proof.json then its own proof's), never
// reported resumed; a job whose files are all its own is resumed.
func TestSkipDoneChecksTheProofJSON(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 100)
	out := filepath.Join(root, "out")
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, `{"id":"a","generate":{"seed":1}}`, `{"id":"b","generate":{"seed":2}}`,
		`{"id":"c","generate":{"seed":3}}`, `{"id":"d","generate":{"seed":4}}`)
	results := filepath.Join(root, "r.jsonl")
	args := []string{"zkpipe", "prove", "--device", "cpu", "--circuit", chain, "--jobs", jobs, "--out", out, "--results", results, "--mem-status", "0"}
	for _, l := range runProve(t, results, args...) {
		if l.Error != "" {
			t.Fatalf("first run: %s: %s", l.ID, l.Error)
		}
	}
	copyOutputs(t, out, "b", "a", ".proof.json")
	if err := os.WriteFile(filepath.Join(out, "c.proof.json"), []byte(`{"pi_a":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "d.proof.json")); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	second := byID(runProveTo(t, &log, results, append(args, "--skip-done")...))
	for id, resumed := range map[string]bool{"a": false, "b": true, "c": false, "d": false} {
		if l := second[id]; l.Error != "" || l.Resumed != resumed {
			t.Errorf("%s: resumed %v, error %q; want resumed %v", id, l.Resumed, l.Error, resumed)
		}
		proof, err := os.ReadFile(filepath.Join(out, id+".proof"))
		if err != nil {
			t.Fatal(err)
		}
		vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(chain, gnarksrc.VKFile))
		if err != nil {
			t.Fatal(err)
		}
		p := groth16.NewProof(vk.CurveID())
		if _, err := p.ReadFrom(bytes.NewReader(proof)); err != nil {
			t.Fatal(err)
		}
		pj, err := gnarksrc.ProofJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(pj)
		if got, _ := os.ReadFile(filepath.Join(out, id+".proof.json")); !bytes.Equal(got, want) {
			t.Errorf("%s.proof.json is not %s.proof's JSON:\n%s\n%s", id, id, got, want)
		}
	}
	if !strings.Contains(log.String(), "a.proof.json") {
		t.Errorf("no word of a's stale proof.json:\n%s", log.String())
	}
}
