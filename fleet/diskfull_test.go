package fleet_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStoreDiskFull: a real serve (with its worker) on a 48 MiB tmpfs
// store. When the disk fills, submit fails saying "store disk full" (not
// "timeout waiting for ack"), so does a worker's store of outputs, and
// serve's log says it; once the space returns, the same serve process takes
// jobs again without a restart, and every job acknowledged is answered.
func TestStoreDiskFull(t *testing.T) {
	bin := binary(t)
	disk := mountTmpfs(t, 48<<20)
	store := filepath.Join(disk, "store")
	nats, m := freePort(t), freePort(t)
	url := "nats://" + nats
	// serve with its worker: the queue and a worker in one process
	args := append(serveArgs(nats, m, store), "--worker=true", "--cache", filepath.Join(t.TempDir(), "cache"))
	serve := start(t, bin, "serve", args...)
	waitHealthy(t, m)
	run(t, bin, "", "circuit", "push", "--nats", url, circuitDir(t))
	q := openQueue(t, url, 0)
	acked := 0
	job := func(i int) string { return fmt.Sprintf(`{"id":"d%04d","generate":{"seed":%d}}`+"\n", i, i) }
	for i := range 3 {
		run(t, bin, job(i), "submit", "--nats", url, "-")
		acked++
	}

	filler := fill(t, disk)
	// Jobs until the store meets the full disk: each either queued
	// (acknowledged) or refused saying why.
	var out string
	for i := 3; ; i++ {
		cmd := exec.Command(bin, "submit", "--nats", url, "-")
		cmd.Stdin = strings.NewReader(job(i))
		b, err := cmd.CombinedOutput()
		if err == nil {
			acked++
			if i > 2000 {
				t.Fatalf("2000 submits on a full disk all queued")
			}
			continue
		}
		out = string(b)
		break
	}
	if !strings.Contains(out, "store disk full") {
		t.Fatalf("submit on a full store disk: %s", out)
	}
	// A worker storing outputs meets the same.
	_, err := q.Proofs.PutBytes(t.Context(), "x", make([]byte, 1<<20))
	if err == nil || !strings.Contains(q.Explain(err).Error(), "store disk full") {
		t.Fatalf("outputs stored on a full disk: %v (%v)", err, q.Explain(err))
	}
	logText := func() string {
		b, _ := os.ReadFile(serve.log)
		return string(b)
	}
	if !strings.Contains(logText(), "store disk full") {
		t.Errorf("serve's log does not say the disk is full:\n%s", logText())
	}

	os.Remove(filler)
	waitHealthy(t, m) // unhealthy while the store is down; the same process
	// The first publish after JetStream's restart may outlast its 5 s
	// timeout on a loaded machine (CI's two cores): submit again, as a user
	// would (the job's id makes it idempotent), a bounded number of times.
	for try := 1; ; try++ {
		cmd := exec.Command(bin, "submit", "--nats", url, "-")
		cmd.Stdin = strings.NewReader(job(9999))
		b, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if try == 5 {
			t.Fatalf("submit after the store came back, 5 tries: %v\n%s", err, b)
		}
		t.Logf("submit after the store came back, try %d: %v\n%s", try, err, b)
	}
	acked++
	// every acknowledged job is answered by serve's own worker, which
	// went on after the store came back
	res := waitResults(t, q, acked, 120*time.Second)
	for id, r := range res {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
	if len(res) != acked {
		t.Errorf("%d results, %d jobs were acknowledged", len(res), acked)
	}
	select {
	case <-serve.done:
		t.Fatal("serve exited")
	default:
	}
	if !strings.Contains(logText(), "JetStream started again") {
		t.Errorf("serve's log:\n%s", logText())
	}
}
