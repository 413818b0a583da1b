package fleet_test

import (
	"context"
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
	if out := run(t, binary(t), "", "circuit", "list", "--nats", url); strings.TrimSpace(out) != "chain" {
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
