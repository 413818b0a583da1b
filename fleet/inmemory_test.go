package fleet_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// chainWitnessFile writes circuit chain's witness for seed, as gnark
// encodes it, to a file for submit.
func chainWitnessFile(t *testing.T, seed int64) string {
	t.Helper()
	c, err := gnarksrc.LoadDir(circuitDir(t))
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Source.(*gnarksrc.Source).Witness(seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), fmt.Sprintf("s%d.witness", seed))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gnarkVerifiesFiles checks a proof file and public witness file with
// gnark's own groth16.Verify against circuit chain's circuit.vk.
func gnarkVerifiesFiles(t *testing.T, proofPath, publicPath string) {
	t.Helper()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	proof := groth16.NewProof(ecc.BN254)
	if _, err := proof.ReadFrom(bytes.NewReader(read(proofPath))); err != nil {
		t.Fatal(err)
	}
	vk := groth16.NewVerifyingKey(ecc.BN254)
	if _, err := vk.ReadFrom(bytes.NewReader(read(filepath.Join(circuitDir(t), gnarksrc.VKFile)))); err != nil {
		t.Fatal(err)
	}
	pub, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.UnmarshalBinary(read(publicPath)); err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, pub); err != nil {
		t.Errorf("gnark rejects %s: %v", proofPath, err)
	}
}

// A worker over a real engine proves witness jobs with its witnesses in
// memory and its outputs stored from memory: the engine opens no output
// directory, and the worker's cache holds the circuit it fetched and
// nothing else, during the run and after. Before, witnesses went through
// CACHE/witness and proofs through CACHE/out.
func TestWorkerWritesNothingButItsCircuits(t *testing.T) {
	t.Chdir(t.TempDir()) // the engine's default directory would be ./out
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf(`{"id":"m%d","circuit":"chain","witness":%q}`, i, chainWitnessFile(t, int64(i+1))))
	}
	lines = append(lines, `{"id":"g","circuit":"chain","generate":{"seed":9}}`)
	submit(t, q, "", lines...)

	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Output: fleet.PerJobOutput{}, Log: testLog{t},
		Memory: engine.MemoryOptions{Budget: "off"}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	cache := t.TempDir()
	w := fleet.NewWorker(q, eng, fleet.WorkerOptions{Cache: cache, Poll: 50 * time.Millisecond, Log: testLog{t}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	res := waitResults(t, q, 4, 60*time.Second)
	for id, r := range res {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
			continue
		}
		gnarkVerifiesFiles(t, r.Proof, r.Public)
	}
	settled(t, q)
	noneLeft(t, q)
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("worker: %v", err)
	}
	var files []string
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != cache {
			rel, _ := filepath.Rel(cache, p)
			files = append(files, rel)
		}
		return nil
	})
	for _, f := range files {
		if f != "circuits" && !strings.HasPrefix(f, "circuits"+string(filepath.Separator)+"chain") {
			t.Errorf("the worker wrote %s in its cache (all of it: %v)", f, files)
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("the engine wrote in the working directory: %v", ents)
	}
	if s := eng.Snapshot().Memory; s.Reserved != 0 {
		t.Errorf("%d bytes still reserved once every job is answered (the witnesses' holds)", s.Reserved)
	}
}

// Every witness the worker fetches into memory is reserved with the
// prover's budget until the prover is done with it, answered or not:
// proven, failed at the prover, handed back.
func TestWitnessHoldsAreGivenBack(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", witnessJob(t, "h1"), witnessJob(t, "h2"), witnessJob(t, "h3"))

	// A prover that fails every job for its host hands them back; their
	// witnesses' holds go with them.
	sick := newFake(t, 1)
	sick.hostFault = true
	sw := fleet.NewWorker(q, sick, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: testLog{t}})
	ctx, cancel := context.WithDeadline(context.Background(), waitEnd(t))
	defer cancel()
	if err := sw.Run(ctx, ctx); err == nil || !strings.Contains(err.Error(), "stopped taking jobs") {
		t.Fatalf("sick worker: Run = %v, want it to stop taking jobs", err)
	}
	if len(sick.entered()) == 0 {
		t.Fatal("the sick prover got no job")
	}
	if n := sick.heldBytes(); n != 0 {
		t.Errorf("%d witness bytes still held by jobs handed back", n)
	}

	f := newFake(t, 2)
	runWorker(t, q, f)
	for id, r := range waitResults(t, q, 3, 20*time.Second) {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
	settled(t, q)
	if n := f.heldBytes(); n != 0 {
		t.Errorf("%d witness bytes still held by answered jobs", n)
	}
}

// TestWorkerCalldata: a worker with calldata on (zkpipe worker --calldata)
// stores each gnark proof's Solidity calldata beside it, its result line
// names it, and zkpipe results (Collect) fetches it; the calldata is what
// zkpipe prove --calldata writes for that proof (its --skip-done writes it
// again from the same verified proof files, and the two are equal byte for
// byte).
func TestWorkerCalldata(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	witnesses := map[string]string{"c1": chainWitnessFile(t, 3), "c2": chainWitnessFile(t, 4)}
	var lines []string
	for id, p := range witnesses {
		lines = append(lines, fmt.Sprintf(`{"id":%q,"circuit":"chain","witness":%q}`, id, p))
	}
	submit(t, q, "", lines...)

	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Output: fleet.PerJobOutput{}, Log: testLog{t},
		Memory: engine.MemoryOptions{Budget: "off"}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	w := fleet.NewWorker(q, eng, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: testLog{t},
		Gnark: gnarksrc.Options{Calldata: true}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	res := waitResults(t, q, 2, 60*time.Second)
	settled(t, q)
	before, err := q.Results.GetLastMsgForSubject(context.Background(), "zkpipe.results.c1")
	if err != nil {
		t.Fatal(err)
	}
	// c1 again, as the server would redeliver it after a worker died
	// between publishing and acking: answered from the stored outputs, the
	// line naming the calldata made again from the verified proof.
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.jobs.normal", []byte(`{"id":"c1","circuit":"chain","witness":"nats-object:c1@gone.witness"}`)); err != nil {
		t.Fatal(err)
	}
	settled(t, q)
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("worker: %v", err)
	}
	if n := eng.Snapshot().Proved; n != 2 {
		t.Errorf("%d proofs made, want 2: the redelivered job was proven again", n)
	}
	m, err := q.Results.GetLastMsgForSubject(context.Background(), "zkpipe.results.c1")
	if err != nil {
		t.Fatal(err)
	}
	var again stream.Result
	if m.Sequence <= before.Sequence {
		t.Errorf("no new result line for c1 once redelivered")
	}
	if err := json.Unmarshal(m.Data, &again); err != nil || again.Error != "" || again.Calldata != "c1.calldata" {
		t.Errorf("the republished line: %+v %v, want it to name c1.calldata", again, err)
	}

	fetched := map[string][]byte{}
	var dir string
	for id := range witnesses {
		r := res[id]
		if r.Error != "" || r.Calldata == "" || filepath.Base(r.Calldata) != id+".calldata" {
			t.Fatalf("%s: error %q, calldata %q: want ID.calldata fetched", id, r.Error, r.Calldata)
		}
		gnarkVerifiesFiles(t, r.Proof, r.Public)
		b, err := os.ReadFile(r.Calldata)
		if err != nil || !bytes.HasPrefix(b, []byte("0x")) {
			t.Fatalf("%s: calldata %q %v", id, b, err)
		}
		fetched[id], dir = b, filepath.Dir(r.Calldata)

		// the stored outputs: the line names the calldata, and it is there
		data, err := q.Proofs.GetBytes(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var o fleet.Outputs
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatal(err)
		}
		if o.Result.Calldata != id+".calldata" || !bytes.Equal(o.Files[id+".calldata"], b) {
			t.Errorf("%s: stored line names %q; stored calldata %q, fetched %q", id, o.Result.Calldata, o.Files[id+".calldata"], b)
		}
		if err := os.Remove(r.Calldata); err != nil {
			t.Fatal(err)
		}
	}

	// prove --calldata --skip-done over what results wrote: it answers
	// from the proof files and writes their calldata again
	c, err := gnarksrc.LoadDirWith(circuitDir(t), gnarksrc.Options{Calldata: true})
	if err != nil {
		t.Fatal(err)
	}
	pe, err := engine.New(context.Background(), engine.Options{Device: "cpu", Out: dir, SkipDone: true, Log: testLog{t},
		Memory: engine.MemoryOptions{Budget: "off"}}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer pe.Close()
	jobs := make(chan stream.Line, len(witnesses))
	n := 0
	for id, p := range witnesses {
		n++
		jobs <- stream.Line{Number: n, Request: stream.Request{ID: id, Circuit: c.Name, Witness: p}}
	}
	close(jobs)
	err = pe.Run(context.Background(), jobs, func(r stream.Result) error {
		b, rerr := os.ReadFile(r.Calldata)
		if !r.Resumed || rerr != nil || !bytes.Equal(b, fetched[r.ID]) {
			t.Errorf("%s: prove --calldata --skip-done: resumed %v, calldata %q (%v); the worker's %q", r.ID, r.Resumed, b, rerr, fetched[r.ID])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wideDir is a commit circuit of 2^14 constraints named wide: its witness
// holds 2^14 secret values (half a megabyte, five of the store's chunks).
var wideDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkpipe-fleet-wide-")
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "wide")
	_, err = gnarksrc.Setup("commit", 1<<14, dir)
	return dir, err
})

// TestWitnessIsStreamed: a witness of half a megabyte (circuit wide) reaches the prover as a reader
// of the store's chunks, not as bytes the worker fetched first (the
// source's read is the only copy), whole and unchanged even though the
// prover reads it slowly (7.5 s: nats.go's own object reader gives up after
// 5 s), with its own size reserved while it is read rather than the most
// its circuit's witness could be. Before, the worker read it whole into memory, then the source
// copied it.
func TestWitnessIsStreamed(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	dir, err := wideDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.PushDir(t.Context(), q, dir); err != nil {
		t.Fatal(err)
	}
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Source.(*gnarksrc.Source).Witness(3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "big.witness")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFake(t, 2)
	// a read that lasts past nats.go's object reader's 5 s: cut short
	// there, whole here
	f.slowRead = 1500 * time.Millisecond
	runWorker(t, q, f)
	submit(t, q, "", fmt.Sprintf(`{"id":"wb","circuit":"wide","witness":%q}`, p))
	waitResults(t, q, 1, 30*time.Second) // failed: the fake wants its own witness
	f.mu.Lock()
	got, held := f.reads["wb"], f.holds["wb"]
	f.mu.Unlock()
	if len(b) < 512<<10 {
		t.Fatalf("a witness of %d bytes: not the half megabyte meant", len(b))
	}
	if got.reader != "*fleet.storeReader" || got.n != len(b) || got.sum != sha256.Sum256(b) {
		t.Errorf("the prover read %d bytes through %s (same bytes: %v); want the %d bytes of the file through the store's reader",
			got.n, got.reader, got.sum == sha256.Sum256(b), len(b))
	}
	if held != int64(len(b)) {
		t.Errorf("reserved %d bytes while it was read, want its size %d", held, len(b))
	}
	if n := f.heldBytes(); n != 0 {
		t.Errorf("%d bytes still held", n)
	}
}
