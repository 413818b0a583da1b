package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// TestCircuitListSkipsInvalidNames: objects any user of the queue can put
// under names that are no circuit's (a path, a dot name, a file that is not
// a circuit's) are not listed as circuits, by Circuits or circuit list.
func TestCircuitListSkipsInvalidNames(t *testing.T) {
	q, url := startQueue(t, 5*time.Second)
	pushChain(t, q)
	ctx := context.Background()
	for _, n := range []string{"../evil/circuit.pk", "./circuit.vk", "../circuit.r1cs", ".hidden/circuit.zkey",
		"a b/circuit.zkey", "x/../circuit.zkey", "evil/../../circuit.zkey", "/abs/circuit.zkey", "ok/notacircuitfile", "nested/dir/circuit.zkey"} {
		if _, err := q.Circuits.PutString(ctx, n, "planted"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := fleet.Circuits(ctx, q)
	if err != nil || !slices.Equal(got, []string{"chain"}) {
		t.Fatalf("Circuits: %v %v, want [chain]", got, err)
	}
	out := run(t, binary(t), "", "circuit", "list", "--nats", url)
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] { // under the header
		names = append(names, strings.Fields(l)[0])
	}
	if !slices.Equal(names, []string{"chain"}) {
		t.Fatalf("circuit list: %q, want chain alone", out)
	}
}

// TestHalfPushedCircuitWaits: a push cut short (killed after its first
// file) leaves the circuit incomplete; a job of it is handed back, not
// failed, and is proven once the circuit is pushed whole. Before, it failed
// for good ("circuit.vk: no such file"). The incomplete circuit is not
// listed meanwhile.
func TestHalfPushedCircuitWaits(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	ctx := context.Background()
	dir := circuitDir(t)
	// What a push killed after its first file leaves: its marker and
	// circuit.r1cs.
	b, err := os.ReadFile(filepath.Join(dir, gnarksrc.R1CSFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Circuits.PutString(ctx, "chain/circuit.push", "cut short"); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Circuits.PutBytes(ctx, "chain/"+gnarksrc.R1CSFile, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := fleet.Circuits(ctx, q); len(got) != 0 {
		t.Fatalf("a circuit being pushed is listed: %v", got)
	}
	_, err = fleet.FetchCircuit(ctx, q, "chain", t.TempDir(), gnarksrc.Options{})
	if !strings.Contains(errString(err), "incomplete") {
		t.Fatalf("FetchCircuit of a half-pushed circuit: %v", err)
	}

	watch, err := q.HandBacks.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()
	runWorker(t, q, newFake(t, 2))
	submit(t, q, "normal", `{"id":"early","circuit":"chain","generate":{"seed":1}}`)
	for e := range watch.Updates() {
		if e != nil { // the job went back to the queue
			break
		}
	}
	pushChain(t, q)
	res := waitResults(t, q, 1, 60*time.Second)
	if r := res["early"]; r.Error != "" || r.Proof == "" {
		t.Fatalf("the job submitted during the push: %+v", r)
	}
	if got, _ := fleet.Circuits(ctx, q); !slices.Equal(got, []string{"chain"}) {
		t.Fatalf("after the push: %v", got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fakeWitness is a witness of circuit chain's shape (1 public, 1 secret
// value) whose secret value spells s (at most 31 bytes): what submit's
// check accepts, and the fake prover compares. Its public value is that of
// chainProof, the proof the fake writes, so that the proof binds to it.
func fakeWitness(s string) []byte {
	b := make([]byte, 12+64)
	b[3], b[7], b[11] = 1, 1, 2
	if p, err := chainProof(); err == nil && len(p[1]) >= 44 {
		copy(b[12:44], p[1][12:44])
	}
	copy(b[12+64-len(s):], s)
	return b
}

// submitRaw queues a job with its witness as a client that skips zkpipe
// submit's checks would (the nats CLI): the worker's own guards are what
// a job meets then.
func submitRaw(t *testing.T, q *fleet.Queue, id, circuit string, witness []byte) {
	t.Helper()
	ctx := context.Background()
	obj := id + "@raw.witness"
	if _, err := q.Witness.PutBytes(ctx, obj, witness); err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf(`{"id":%q,"circuit":%q,"witness":"nats-object:%s"}`, id, circuit, obj)
	if _, err := q.Conn.JS.Publish(ctx, "zkpipe.jobs.normal", []byte(job)); err != nil {
		t.Fatal(err)
	}
}
