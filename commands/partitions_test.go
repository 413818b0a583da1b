package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// zkpipe prove answers a request of three bits partitions with one line
// of three proofs gnark accepts, each in the request's subdirectory of
// --out; a request over --max-partitions is refused, naming the flag.
func TestProveRequestOfPartitions(t *testing.T) {
	root := t.TempDir()
	bits := setupCircuit(t, root, "bits", "bits", 300)
	out := filepath.Join(root, "out")
	jobs := filepath.Join(root, "jobs.jsonl")
	if err := os.WriteFile(jobs, []byte(`{"id":"porep-1","circuit":"bits","partitions":[{"generate":{"seed":1}},{"generate":{"seed":2}},{"generate":{"seed":3}}]}
{"id":"porep-2","circuit":"bits","partitions":[{"generate":{"seed":1}},{"generate":{"seed":2}},{"generate":{"seed":3}},{"generate":{"seed":4}}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(root, "results.jsonl")
	lines := runProve(t, results, "zkpipe", "prove", "--device", "cpu", "--circuit", bits, "--jobs", jobs, "--out", out,
		"--results", results, "--max-partitions", "3")
	if len(lines) != 2 {
		t.Fatalf("%d result lines, want 2: %+v", len(lines), lines)
	}
	byID := map[string]int{lines[0].ID: 0, lines[1].ID: 1}
	r := lines[byID["porep-1"]]
	if r.Error != "" || len(r.Partitions) != 3 {
		t.Fatalf("porep-1: %+v", r)
	}
	vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(bits, gnarksrc.VKFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range r.Partitions {
		if filepath.Dir(p.Proof) != filepath.Join(out, "porep-1") {
			t.Errorf("partition %d's proof %s: not in out/porep-1", i, p.Proof)
		}
		if err := gnarksrc.VerifyFiles(vk, p.Proof, p.Public); err != nil {
			t.Errorf("partition %d: gnark rejects its proof: %v", i, err)
		}
	}
	if e := lines[byID["porep-2"]].Error; !strings.Contains(e, "job porep-2: parse: partitions: 4 of them, more than the 3") || !strings.Contains(e, "--max-partitions is 3") {
		t.Errorf("porep-2: %q, want refused naming --max-partitions", e)
	}
}

// A request's line names flags in its partitions' errors as in its own.
func TestFlagNamedResultNamesFlagsInPartitions(t *testing.T) {
	r := stream.Result{ID: "r1", Error: "job r1: partition 1 of 2 failed; first: raise engine.Options.Memory.Budget",
		Partitions: []stream.PartitionResult{{Index: 0}, {Index: 1, Error: "job r1/1: raise engine.Options.Memory.Budget"}}}
	got := flagNamedResult(r)
	if !strings.Contains(got.Error, "raise --mem-budget") || got.Partitions[1].Error != "job r1/1: raise --mem-budget" {
		t.Errorf("flag names: %q, %q", got.Error, got.Partitions[1].Error)
	}
	if r.Partitions[1].Error != "job r1/1: raise engine.Options.Memory.Budget" {
		t.Error("the caller's line was changed")
	}
}
