package fleet_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// TestHashToFieldThroughTheFleet: a circuit with a commitment whose
// directory records sha256 (as gnark's Solidity verifier needs) is pushed
// with that choice, proven by a real engine, and its proofs pass zkpipe
// results against the store's key and against the user's directory, and
// gnark's Verify with sha256: the worker and every verifier hash alike.
func TestHashToFieldThroughTheFleet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "commitsha")
	if _, err := gnarksrc.Setup("commit", 100, dir); err != nil {
		t.Fatal(err)
	}
	if err := gnarksrc.WriteHashToField(dir, gnarksrc.HashSHA256); err != nil {
		t.Fatal(err)
	}
	q, _ := startQueue(t, 5*time.Second)
	if _, err := fleet.PushDir(context.Background(), q, dir); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Out: t.TempDir(), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	submit(t, q, "", genJob("a"), genJob("b"))
	runWorker(t, q, eng)
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range waitResults(t, q, 2, 60*time.Second) {
		if r.Error != "" || !strings.HasPrefix(r.VerifiedWith, "circuit store commitsha/circuit.vk") {
			t.Fatalf("%s: error %q, verified with %q", id, r.Error, r.VerifiedWith)
		}
		if err := gnarksrc.VerifyFilesWith(vk, gnarksrc.HashSHA256, r.Proof, r.Public); err != nil {
			t.Errorf("%s: gnark's Verify with sha256: %v", id, err)
		}
		if gnarksrc.VerifyFiles(vk, r.Proof, r.Public) == nil {
			t.Errorf("%s: proved with gnark's default hash, not the directory's sha256", id)
		}
	}
	local, err := fleet.LocalVerifier(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range collectAll(t, q, fleet.ResultsOptions{Verifier: local}) {
		if r.Error != "" || r.VerifiedWith != "--circuit "+dir {
			t.Errorf("%s with --circuit: %+v", id, r)
		}
	}
}
