package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/stream"
)

// storeAs replaces job id's stored outputs with those of job from, its
// files renamed: a valid proof of another statement under id, as a hostile
// worker (anyone with access to the queue) can store it.
func storeAs(t *testing.T, q *fleet.Queue, id, from string) {
	t.Helper()
	data, err := q.Proofs.GetBytes(context.Background(), from)
	if err != nil {
		t.Fatal(err)
	}
	var o fleet.Outputs
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for name, b := range o.Files {
		files[id+strings.TrimPrefix(name, from)] = b
	}
	o.Result.ID, o.Files = id, files
	storeOutputs(t, q, id, o)
}

func storeOutputs(t *testing.T, q *fleet.Queue, id string, o fleet.Outputs) {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Proofs.PutBytes(context.Background(), id, data); err != nil {
		t.Fatal(err)
	}
}

// writeJobs writes a jobs file, as a user keeps the one given to submit.
func writeJobs(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jobs.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readStatements(t *testing.T, jobs string) *fleet.Statements {
	t.Helper()
	s, err := fleet.ReadStatements(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A witness job whose stored proof is replaced by a valid proof of the
// same circuit for another witness: the circuit's key accepts it, so
// results without --jobs calls the job proved (the gap); with the jobs
// file, its line fails, naming the job, and nothing of it is written. An
// honest witness job is bound; a generate job says it is not.
func TestResultsJobsBindsTheSubmittedPublicInputs(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	dir := circuitDir(t)
	_, public1, witness1 := proveSeed(t, dir, 1)
	proof2, public2, _ := proveSeed(t, dir, 2)
	if bytes.Equal(public1, public2) {
		t.Fatal("seeds 1 and 2 have the same public inputs: the test shows nothing")
	}
	wdir := t.TempDir()
	w1 := filepath.Join(wdir, "w1.witness")
	os.WriteFile(w1, witness1, 0o644)
	jobs := writeJobs(t,
		fmt.Sprintf(`{"id":"honest","circuit":"chain","witness":%q}`, w1),
		fmt.Sprintf(`{"id":"victim","circuit":"chain","witness":%q}`, w1),
		`{"id":"gen","circuit":"chain","generate":{"seed":1}}`)
	submitFile(t, q, jobs)
	submit(t, q, "", genJob("outside")) // not in the jobs file results is given
	runEngine(t, q)
	waitResults(t, q, 4, 20*time.Second)
	settled(t, q)
	storeOutputs(t, q, "victim", fleet.Outputs{
		Result: stream.Result{ID: "victim", Circuit: "chain", Stages: []stream.StageTime{}},
		Files:  map[string][]byte{"victim.proof": proof2, "victim.public": public2},
	})
	if r := collectAll(t, q, fleet.ResultsOptions{})["victim"]; r.Error != "" || r.Statement != "" {
		t.Fatalf("without --jobs: %+v, want it proved (the key accepts the proof)", r)
	}

	out := t.TempDir()
	res := collectAll(t, q, fleet.ResultsOptions{Out: out, Statements: readStatements(t, jobs)})
	v := res["victim"]
	if !strings.Contains(v.Error, "job victim: the stored proof is for other public inputs: public input 0 is ") ||
		!strings.Contains(v.Error, w1) || v.Proof != "" || v.FailedStage != "results" {
		t.Errorf("victim with --jobs: %+v", v)
	}
	if _, err := os.Stat(filepath.Join(out, "victim.proof")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("victim's proof written: %v", err)
	}
	if r := res["honest"]; r.Error != "" || r.Statement != fleet.Bound {
		t.Errorf("honest: %+v", r)
	}
	if r := res["gen"]; r.Error != "" || r.Statement != "not bound (generate job)" {
		t.Errorf("gen: %+v", r)
	}
	if r, ok := res["outside"]; !ok || r.Error != "" || r.Statement != "" {
		t.Errorf("a job not in --jobs: %+v, want it as without --jobs", r)
	}

	// The remedy: the same jobs file submitted again queues the victim (its
	// stored proof is not of its witness, so it is not done), and the worker
	// proves it again rather than republish the stored proof; then it binds.
	var again []fleet.Submitted
	f := mustOpen(t, jobs)
	if _, err := fleet.Submit(context.Background(), q, f, fleet.SubmitOptions{}, func(s fleet.Submitted) { again = append(again, s) }); err != nil {
		t.Fatal(err)
	}
	for _, s := range again {
		if want := s.ID == "victim"; s.Queued != want || s.Done == want {
			t.Errorf("submitted again: %+v", s)
		}
	}
	deadline := waitEnd(t)
	for {
		r := collectAll(t, q, fleet.ResultsOptions{Statements: readStatements(t, jobs)})["victim"]
		if r.Error == "" && r.Statement == fleet.Bound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("victim after submitting it again: %+v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// runEngine runs a worker over a real CPU engine until the test ends.
func runEngine(t *testing.T, q *fleet.Queue) {
	t.Helper()
	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Out: t.TempDir(), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() }) // after the worker's cleanup
	runWorker(t, q, eng)
}

// submitFile submits the jobs file at p, as zkpipe submit does.
func submitFile(t *testing.T, q *fleet.Queue, p string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	refused, err := fleet.Submit(context.Background(), q, f, fleet.SubmitOptions{}, func(fleet.Submitted) {})
	if err != nil || refused != 0 {
		t.Fatalf("submit %s: %d refused, %v", p, refused, err)
	}
}

// The same for a circom wtns job, proven by a real engine: its stored
// proof replaced by the proof of an input job of other inputs fails, both
// against the store's zkey and against the user's verification_key.json
// (the number of public signals comes from the key in use); an honest
// wtns job is bound, an input job is not.
func TestResultsJobsBindsACircomWtns(t *testing.T) {
	td := filepath.Join("..", "source", "circomsrc", "testdata")
	q, _ := startQueue(t, 5*time.Second)
	if _, err := fleet.PushCircom(context.Background(), q, filepath.Join(td, "mul.zkey"), filepath.Join(td, "mul.wasm")); err != nil {
		t.Fatal(err)
	}
	wtns, _ := filepath.Abs(filepath.Join(td, "mul.wtns"))
	jobs := writeJobs(t,
		fmt.Sprintf(`{"id":"honest","wtns":%q}`, wtns),
		fmt.Sprintf(`{"id":"victim","wtns":%q}`, wtns),
		`{"id":"other","input":{"a":"5","b":"7"}}`)
	submitFile(t, q, jobs)
	runEngine(t, q)
	waitResults(t, q, 3, 30*time.Second)
	settled(t, q)
	storeAs(t, q, "victim", "other")
	if r := collectAll(t, q, fleet.ResultsOptions{})["victim"]; r.Error != "" {
		t.Fatalf("without --jobs: %+v, want it proved (the key accepts the proof)", r)
	}
	local, err := fleet.LocalVerifier(context.Background(), "", filepath.Join(td, "mul.vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*fleet.Verifier{nil, local} {
		res := collectAll(t, q, fleet.ResultsOptions{Verifier: v, Statements: readStatements(t, jobs)})
		if r := res["victim"]; !strings.Contains(r.Error, "job victim: the stored proof is for other public inputs: public input 0 is ") || r.Proof != "" {
			t.Errorf("victim, key %v: %+v", v, r)
		}
		if r := res["honest"]; r.Error != "" || r.Statement != fleet.Bound {
			t.Errorf("honest, key %v: %+v", v, r)
		}
		if r := res["other"]; r.Error != "" || r.Statement != "not bound (input job)" {
			t.Errorf("other, key %v: %+v", v, r)
		}
	}
}

// A result line that claims its own statement (written by whoever
// published it) says nothing in results' output: only --jobs binds.
func TestResultLineCannotClaimBound(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	proof, public := realProof(t)
	storeOutputs(t, q, "claim", fleet.Outputs{
		Result: stream.Result{ID: "claim", Circuit: "chain", Stages: []stream.StageTime{}},
		Files:  map[string][]byte{"claim.proof": proof, "claim.public": public},
	})
	line, _ := json.Marshal(stream.Result{ID: "claim", Circuit: "chain", Statement: fleet.Bound, Stages: []stream.StageTime{}})
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.results.claim", line); err != nil {
		t.Fatal(err)
	}
	if r := collectAll(t, q, fleet.ResultsOptions{})["claim"]; r.Error != "" || r.Statement != "" {
		t.Errorf("collected %+v: want proved, with no statement", r)
	}
}

// A --jobs file that holds no job line, or is not there, is refused before
// anything is collected, naming the flag.
func TestReadStatementsRefusesABadFile(t *testing.T) {
	for name, p := range map[string]string{
		"not a jobs file": writeJobs(t, "id,witness", "j1,w1.witness"),
		"missing":         filepath.Join(t.TempDir(), "nope.jsonl"),
		"a directory":     t.TempDir(),
	} {
		if _, err := fleet.ReadStatements(context.Background(), p); err == nil || !strings.Contains(err.Error(), "--jobs") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
