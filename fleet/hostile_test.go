package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// What a user of the queue (submit, circuit push, any NATS client with
// access) must not be able to do to the machines of others.

// submit uploads only regular files: before, a job naming /dev/zero was
// uploaded until the server's disk filled, and a FIFO nobody writes to hung
// the submit.
func TestSubmitRefusesWitnessesThatAreNotFiles(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	fifo := filepath.Join(t.TempDir(), "fifo.witness")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, t.TempDir()} {
		ctx, cancel := context.WithDeadline(context.Background(), waitEnd(t))
		var got []fleet.Submitted
		refused, err := fleet.Submit(ctx, q, strings.NewReader(fmt.Sprintf(`{"id":"z","circuit":"chain","witness":%q}`, p)),
			fleet.SubmitOptions{}, func(s fleet.Submitted) { got = append(got, s) })
		cancel()
		if err != nil || refused != 1 || len(got) != 1 || got[0].Err == nil ||
			!strings.Contains(got[0].Err.Error(), "job z") || !strings.Contains(got[0].Err.Error(), p) {
			t.Errorf("%s: refused %d, %+v, %v; want the job refused, naming it and the file", p, refused, got, err)
		}
	}
	if objs, err := q.Witness.List(context.Background()); !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Errorf("uploaded: %d objects (%v)", len(objs), err)
	}
}

// A worker writes only a circuit's own files into its cache: an object
// NAME/../../../x in the circuit store (any user of the queue can put one)
// is refused, not written outside the cache. Before, it was written there.
func TestFetchCircuitStaysInItsCache(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	root := t.TempDir()
	cache := filepath.Join(root, "cache", "circuits")
	if _, err := q.Circuits.PutBytes(context.Background(), "chain/../../../escaped", []byte("owned")); err != nil {
		t.Fatal(err)
	}
	_, err := fleet.FetchCircuit(context.Background(), q, "chain", cache, gnarksrc.Options{})
	if err == nil || !strings.Contains(err.Error(), `"chain/../../../escaped", which is not a circuit's file`) {
		t.Errorf("FetchCircuit: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(root, "escaped")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file written outside the cache: %v", err)
	}
}

// A circuit file larger than its kind can be (here a 1 MiB circuit.json,
// whose loader reads at most 64 KiB) is refused by its size in the store:
// no byte of it reaches the worker's cache. Before, it was downloaded whole
// and only the loader refused it.
func TestOversizedCircuitFileIsNotFetched(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	if _, err := q.Circuits.PutBytes(context.Background(), "chain/"+gnarksrc.MetaFile, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	_, err := fleet.FetchCircuit(context.Background(), q, "chain", cache, gnarksrc.Options{})
	if err == nil || !strings.Contains(err.Error(), "1048576 bytes, more than a circuit's circuit.json can be") {
		t.Fatalf("FetchCircuit: %v, want the oversized circuit.json refused by its size", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "chain", gnarksrc.MetaFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the oversized file reached the cache: %v", err)
	}
}

// A witness far larger than its circuit's is refused by its size in the
// store, before a worker downloads it: a job must not fill the worker's
// disk. Before, the worker downloaded it whole, and only the prover's
// parse refused it.
func TestOversizedWitnessIsNotDownloaded(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submitRaw(t, q, "big", "chain", make([]byte, 8<<20)) // submit refuses it: a client that skips the check
	cache := t.TempDir()
	fp := newFake(t, 1)
	w := fleet.NewWorker(q, fp, fleet.WorkerOptions{Cache: cache, Poll: 50 * time.Millisecond, Log: testLog{t}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	defer func() { cancel(); <-done }()
	r := waitResults(t, q, 1, 20*time.Second)["big"]
	if !strings.Contains(r.Error, "8388608 bytes, more than a witness of circuit chain can be") {
		t.Fatalf("result %+v", r)
	}
	if len(fp.entered()) != 0 {
		t.Errorf("the prover got %v", fp.entered())
	}
	noneLeft(t, q)
}

// zkpipe results reads a job's outputs object only as far as outputs can
// be: one that anyone with access put in the store, of any size, becomes a
// failed line naming the job instead of filling the collector's memory.
func TestResultsBoundsTheOutputsItReads(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	big := make([]byte, 64<<20+1)
	if _, err := q.Proofs.PutBytes(context.Background(), "big", big); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.results.big", []byte(`{"id":"big","proof":"big.proof","public":"big.public","stages":[]}`)); err != nil {
		t.Fatal(err)
	}
	r := collectAll(t, q, fleet.ResultsOptions{})["big"]
	if !strings.Contains(r.Error, "job big: outputs: 67108865 bytes in the store, more than a proof's outputs can be") || r.Proof != "" {
		t.Fatalf("result %+v", r)
	}
}

// circuit push uploads regular files only: before, a --zkey naming a FIFO
// nobody writes to hung the push, and /dev/zero was uploaded until the
// server's disk filled.
func TestPushRefusesFilesThatAreNotFiles(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	fifo := filepath.Join(t.TempDir(), "f.zkey")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() { _, err := fleet.PushCircom(context.Background(), q, p, ""); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("push %s: %v", p, err)
			}
		case <-time.After(time.Until(waitEnd(t))):
			t.Fatalf("push %s: still uploading at the test's deadline", p)
		}
	}
	if objs, err := q.Circuits.List(context.Background()); !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Errorf("stored: %d objects (%v)", len(objs), err)
	}
}
