package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/stream"
)

// runSick runs a worker whose prover fails every job for a fault of its own
// until it stops taking jobs (three in a row), handing each back.
func runSick(t *testing.T, q *fleet.Queue) {
	t.Helper()
	sick := newFake(t, 1)
	sick.hostFault = true
	w := fleet.NewWorker(q, sick, fleet.WorkerOptions{Cache: t.TempDir(), Poll: 50 * time.Millisecond, Log: testLog{t}})
	ctx, cancel := context.WithDeadline(context.Background(), waitEnd(t))
	defer cancel()
	if err := w.Run(ctx, ctx); err == nil || !strings.Contains(err.Error(), "stopped taking jobs") {
		t.Fatalf("sick worker: Run = %v, want it to stop taking jobs", err)
	}
}

func startWorker(t *testing.T, q *fleet.Queue, o fleet.WorkerOptions) {
	t.Helper()
	o.Cache, o.Poll, o.Log = t.TempDir(), 50*time.Millisecond, testLog{t}
	w := fleet.NewWorker(q, newFake(t, 2), o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// noneLeft waits until the witness bucket and the hand-back counts are
// empty: what a job brings along leaves the store with it.
func noneLeft(t *testing.T, q *fleet.Queue) {
	t.Helper()
	for deadline := waitEnd(t); ; time.Sleep(50 * time.Millisecond) {
		objs, oerr := q.Witness.List(context.Background())
		keys, kerr := q.HandBacks.Keys(context.Background())
		if errors.Is(oerr, jetstream.ErrNoObjectsFound) && errors.Is(kerr, jetstream.ErrNoKeysFound) {
			return
		}
		if time.Now().After(deadline) {
			names := []string{}
			for _, o := range objs {
				names = append(names, o.Name)
			}
			t.Fatalf("left in the store: witness objects %v (%v), hand-back counts %v (%v)", names, oerr, keys, kerr)
		}
	}
}

func witnessJob(t *testing.T, id string) string {
	p := filepath.Join(t.TempDir(), id+".witness")
	if err := os.WriteFile(p, fakeWitness("witness of "+id), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"id":%q,"circuit":"chain","witness":%q}`, id, p)
}

// A job handed back by sick workers (JetStream counts each Nak as a
// delivery) is not dead-lettered by MaxDeliveries: only deliveries that
// ended with no answer count. Before, the healthy worker answered "delivered
// 4 times" without proving it.
func TestHandBacksDoNotUseUpDeliveries(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", witnessJob(t, "unlucky"))
	runSick(t, q) // three hand-backs of the one job
	startWorker(t, q, fleet.WorkerOptions{MaxDeliveries: 2})
	r := waitResults(t, q, 1, 20*time.Second)["unlucky"]
	if r.Error != "" {
		t.Fatalf("a job that met only a sick worker: %s", r.Error)
	}
	settled(t, q)
	noneLeft(t, q)
}

// Host faults have a budget of their own: a job that every worker fails on
// for a fault of its own still ends, with an error saying so, and leaves
// nothing in the store.
func TestHostFaultBudget(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", witnessJob(t, "gpu-killer"))
	runSick(t, q)
	startWorker(t, q, fleet.WorkerOptions{MaxHostFaults: 3})
	r := waitResults(t, q, 1, 20*time.Second)["gpu-killer"]
	if !strings.Contains(r.Error, "handed back 3 times by workers that could not prove it") {
		t.Fatalf("result %+v", r)
	}
	settled(t, q)
	noneLeft(t, q)
}

// A worker that dies after publishing a job's result and before removing
// its witness (and acking) leaves the job to the next worker, which answers
// it from the stored outputs and removes the witness. Before, the next
// worker did not know the job's witness objects on that path, and they
// stayed in the store for ever.
func TestWitnessOfAJobAnsweredByADeadWorkerIsRemoved(t *testing.T) {
	q, _ := startQueue(t, 300*time.Millisecond)
	pushChain(t, q)
	submit(t, q, "", witnessJob(t, "w1"))

	// The dying worker: takes the job, stores its outputs, publishes the
	// result line, and is gone (no cleanup, no ack).
	c, err := q.Jobs.Consumer(context.Background(), "normal")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var msg jetstream.Msg
	for m := range b.Messages() {
		msg = m
	}
	if msg == nil {
		t.Fatal("no job fetched")
	}
	res := stream.Result{ID: "w1", Circuit: "chain", Proof: "w1.proof", Public: "w1.public", Stages: []stream.StageTime{}}
	proof, public := realProof(t)
	out, _ := json.Marshal(fleet.Outputs{Result: res, Files: map[string][]byte{"w1.proof": proof, "w1.public": public}})
	if _, err := q.Proofs.PutBytes(context.Background(), "w1", out); err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(res)
	m := nats.NewMsg("zkpipe.results.w1")
	m.Data = line
	if _, err := q.Conn.JS.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if objs, err := q.Witness.List(context.Background()); err != nil || len(objs) != 1 {
		t.Fatalf("witness objects before: %d, %v", len(objs), err)
	}

	f := newFake(t, 1)
	runWorker(t, q, f)
	settled(t, q)
	noneLeft(t, q)
	if len(f.entered()) != 0 {
		t.Errorf("proved again: %v", f.entered())
	}
}

// A dead-lettered job (an unknown circuit, here) takes its witness with it.
// Before, the witness objects were only known once fetched, after the
// circuit.
func TestWitnessOfADeadLetterIsRemoved(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submitRaw(t, q, "x", "nope", fakeWitness("witness of x")) // submit refuses a job of no circuit
	runWorker(t, q, newFake(t, 1))
	if r := waitResults(t, q, 1, 20*time.Second)["x"]; !strings.Contains(r.Error, "nope") {
		t.Fatalf("result %+v", r)
	}
	settled(t, q)
	noneLeft(t, q)
}

// A second submit of a queued id (a duplicate the server drops) neither
// replaces the queued job's witness nor leaves its own upload behind. Before,
// both used the object ID.witness: the queued job proved the second witness.
func TestDuplicateSubmitKeepsTheQueuedWitness(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	first := witnessJob(t, "d1") // "witness of d1": the fake accepts only that
	other := filepath.Join(t.TempDir(), "other.witness")
	os.WriteFile(other, fakeWitness("something else"), 0o644)
	submit(t, q, "", first)
	if s := submit(t, q, "", fmt.Sprintf(`{"id":"d1","circuit":"chain","witness":%q}`, other)); !s[0].Duplicate {
		t.Fatalf("second submit: %+v", s[0])
	}
	if objs, err := q.Witness.List(context.Background()); err != nil || len(objs) != 1 {
		t.Fatalf("witness objects after a dropped duplicate: %d (%v), want 1", len(objs), err)
	}
	runWorker(t, q, newFake(t, 1))
	if r := waitResults(t, q, 1, 20*time.Second)["d1"]; r.Error != "" {
		t.Fatalf("the queued job lost its witness: %s", r.Error)
	}
	settled(t, q)
	noneLeft(t, q)
}

// A job cannot make a worker delete another job's witness by naming it.
func TestAJobCannotRemoveAnothersWitness(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", witnessJob(t, "victim"))
	objs, err := q.Witness.List(context.Background())
	if err != nil || len(objs) != 1 {
		t.Fatalf("%d objects, %v", len(objs), err)
	}
	victim := objs[0].Name
	// a job with an unknown circuit, naming the victim's witness: answered
	// with an error, and the victim's object stays
	q.Conn.JS.Publish(context.Background(), "zkpipe.jobs.high",
		[]byte(fmt.Sprintf(`{"id":"thief","circuit":"nope","witness":"nats-object:%s"}`, victim)))
	f := newFake(t, 2)
	f.gate = make(chan struct{}) // hold the victim until the thief is answered
	runWorker(t, q, f)
	for deadline := waitEnd(t); ; time.Sleep(50 * time.Millisecond) {
		if _, err := q.Results.GetLastMsgForSubject(context.Background(), "zkpipe.results.thief"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no result for the thief")
		}
	}
	if _, err := q.Witness.GetInfo(context.Background(), victim); err != nil {
		t.Fatalf("the victim's witness: %v", err)
	}
	close(f.gate)
	if r := waitResults(t, q, 2, 20*time.Second)["victim"]; r.Error != "" {
		t.Fatalf("victim: %s", r.Error)
	}
	noneLeft(t, q)
}
