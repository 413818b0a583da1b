package fleet_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/stream"
)

// zkpipe serve --calldata, its worker proving: zkpipe results fetches each
// proof's ID.calldata and names it on the line, and zkpipe prove
// --calldata --skip-done over the same files writes the same calldata; the
// worker's cache holds its circuit and its lock, nothing of the jobs.
func TestServeCalldataProcesses(t *testing.T) {
	bin := binary(t)
	dir := circuitDir(t)
	tmp := t.TempDir()
	nats, metricsAddr := freePort(t), freePort(t)
	url := "nats://" + nats
	cache := filepath.Join(tmp, "cache")
	start(t, bin, "serve", "serve", "--nats-listen", nats, "--store", filepath.Join(tmp, "store"),
		"--cache", cache, "--mem-status", "0", "--metrics-addr", metricsAddr, "--calldata")
	waitHealthy(t, metricsAddr)
	run(t, bin, "", "circuit", "push", "--nats", url, dir)
	var jobs strings.Builder
	for i := range 2 {
		fmt.Fprintf(&jobs, `{"id":"k%d","circuit":"chain","generate":{"seed":%d}}`+"\n", i, i)
	}
	run(t, bin, jobs.String(), "submit", "--nats", url, "-")
	q := openQueue(t, url, 5*time.Second)
	for deadline := waitEnd(t); ; time.Sleep(50 * time.Millisecond) {
		if info, err := q.Results.Info(t.Context()); err == nil && info.State.Msgs >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no two results by the test's deadline")
		}
	}
	out, results := filepath.Join(tmp, "out"), filepath.Join(tmp, "results.jsonl")
	run(t, bin, "", "results", "--nats", url, "--out", out, "--results", results)
	lines, err := stream.ReadResultsFile(results)
	if err != nil || len(lines) != 2 {
		t.Fatalf("results: %d lines, %v", len(lines), err)
	}
	calls := map[string][]byte{}
	for _, l := range lines {
		if l.Error != "" || l.Calldata != filepath.Join(out, l.ID+".calldata") {
			t.Fatalf("%s: error %q, calldata %q", l.ID, l.Error, l.Calldata)
		}
		gnarkVerifiesFiles(t, l.Proof, l.Public)
		b, err := os.ReadFile(l.Calldata)
		if err != nil || !bytes.HasPrefix(b, []byte("0x")) {
			t.Fatalf("%s: %q %v", l.ID, b, err)
		}
		calls[l.ID] = b
		os.Remove(l.Calldata)
	}
	jobsFile, again := filepath.Join(tmp, "jobs.jsonl"), filepath.Join(tmp, "again.jsonl")
	os.WriteFile(jobsFile, []byte(jobs.String()), 0o644)
	run(t, bin, "", "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobsFile, "--out", out, "--results", again, "--calldata", "--skip-done", "--mem-status", "0")
	relines, err := stream.ReadResultsFile(again)
	if err != nil || len(relines) != 2 {
		t.Fatalf("prove --skip-done: %d lines, %v", len(relines), err)
	}
	for _, l := range relines {
		b, _ := os.ReadFile(l.Calldata)
		if !l.Resumed || !bytes.Equal(b, calls[l.ID]) {
			t.Errorf("%s: resumed %v, prove --calldata wrote %q, the worker stored %q", l.ID, l.Resumed, b, calls[l.ID])
		}
	}
	var left []string
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if rel, _ := filepath.Rel(cache, p); err == nil && rel != "." && rel != ".zkpipe.lock" && rel != "circuits" && !strings.HasPrefix(rel, filepath.Join("circuits", "chain")) {
			left = append(left, rel)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("serve's worker wrote %v in its cache", left)
	}
}
