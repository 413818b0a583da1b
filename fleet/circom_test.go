package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// TestCircomThroughTheFleet pushes a circom zkey with its witness
// calculator, and proves a wtns job and an input job with a real engine.
func TestCircomThroughTheFleet(t *testing.T) {
	td := filepath.Join("..", "source", "circomsrc", "testdata")
	q, _ := startQueue(t, 5*time.Second)
	name, err := fleet.PushCircom(context.Background(), q, filepath.Join(td, "mul.zkey"), filepath.Join(td, "mul.wasm"))
	if err != nil || name != "mul" {
		t.Fatalf("push: %q %v", name, err)
	}
	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Out: t.TempDir(), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() }) // after the worker's cleanup
	wtns, _ := filepath.Abs(filepath.Join(td, "mul.wtns"))
	submit(t, q, "",
		fmt.Sprintf(`{"id":"w","wtns":%q}`, wtns),
		`{"id":"i","input":{"a":"3","b":"11"}}`)
	runWorker(t, q, eng)
	res := waitResults(t, q, 2, 30*time.Second)
	vk, err := circomsrc.ReadVerifyingKey(filepath.Join(td, "mul.vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range res {
		if r.Error != "" {
			t.Fatalf("%s: %s", id, r.Error)
		}
		if err := circomsrc.VerifyFiles(context.Background(), vk, r.Proof, r.Public); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if _, err := os.Stat(r.Proof); err != nil {
			t.Error(err)
		}
		if !strings.HasPrefix(r.VerifiedWith, "circuit store mul/circuit.zkey (SHA-256=") {
			t.Errorf("%s: verified with %q, want the zkey's key in the store", id, r.VerifiedWith)
		}
	}
	// against the user's own verification_key.json, which wins over the store
	local, err := fleet.LocalVerifier(context.Background(), "", filepath.Join(td, "mul.vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range collectAll(t, q, fleet.ResultsOptions{Verifier: local}) {
		if r.Error != "" || r.VerifiedWith != "--vkey "+filepath.Join(td, "mul.vkey.json") {
			t.Errorf("%s with --vkey: %+v", id, r)
		}
	}
}
