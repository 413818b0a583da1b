package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/fleet"
)

// A worker's own disk failing (its cache full, read-only) is not the jobs'
// fault (issue 22, item 11).

// mountTmpfs mounts a tmpfs of size bytes on a new directory for the test,
// or skips the test, loudly, where mounting is not permitted.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: mount -t tmpfs is not permitted here (%v: %s); the full-disk case needs root or CAP_SYS_ADMIN", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		// lazily: a process of the test may still hold a file there
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file in dir until the disk is full, and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for n := 4096; n > 0; n /= 2 { // the last pages too
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return p
}

// sickDiskWorker runs a worker on cache until it stops; it must stop by
// itself, for its disk, having answered nothing.
func sickDiskWorker(t *testing.T, q *fleet.Queue, cache, want string) {
	t.Helper()
	sickDiskWorkerAfter(t, q, cache, want, 0)
}

func sickDiskWorkerAfter(t *testing.T, q *fleet.Queue, cache, want string, results uint64) {
	t.Helper()
	w := fleet.NewWorker(q, newFake(t, 2), fleet.WorkerOptions{Cache: cache, Poll: 50 * time.Millisecond, Log: testLog{t}})
	ctx, cancel := context.WithDeadline(context.Background(), waitEnd(t))
	defer cancel()
	err := w.Run(ctx, ctx)
	if err == nil || !strings.Contains(err.Error(), "stopped taking jobs: this worker's disk") || !strings.Contains(err.Error(), want) {
		t.Fatalf("worker on a sick disk: Run = %v, want it to stop taking jobs for its disk (%s)", err, want)
	}
	if info, _ := q.Results.Info(context.Background()); info.State.Msgs != results {
		t.Fatalf("%d results published by a worker whose disk failed", info.State.Msgs-results)
	}
}

// A worker whose cache fills up before it has fetched the circuit hands
// back the job it could not start and takes no more, answering none; a
// healthy worker then proves them all. Before, the fetch's "no space left
// on device" failed every job for good. Once the circuit is cached, a full
// or read-only cache stops nothing: jobs pass through memory.
func TestWorkerDiskFaultsHandBack(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	cache := mountTmpfs(t, 8<<20)
	var lines []string
	for i := range 4 {
		lines = append(lines, witnessJob(t, fmt.Sprint("a", i)))
	}
	submit(t, q, "", lines...)

	// the circuit's fetch meets a full disk
	filler := fill(t, cache)
	sickDiskWorker(t, q, cache, "no space left on device")
	os.Remove(filler)
	healthy := func(n int) {
		t.Helper()
		w := fleet.NewWorker(q, newFake(t, 2), fleet.WorkerOptions{Cache: cache, Poll: 50 * time.Millisecond, Log: testLog{t}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx, ctx) }()
		for id, r := range waitResults(t, q, n, 20*time.Second) {
			if r.Error != "" {
				t.Errorf("%s: %s", id, r.Error)
			}
		}
		settled(t, q)
		cancel()
		<-done
	}
	healthy(4)

	// Once the circuit is cached a job needs no disk: its witness is
	// fetched into memory and its outputs stored from memory. Workers on a
	// full cache, then on a read-only one, prove every job and write
	// nothing there. (Before, the witness's download into the cache met the
	// disk, and these workers stopped for it, handing the jobs back.)
	batch := func(prefix string) {
		t.Helper()
		lines = lines[:0]
		for i := range 4 {
			lines = append(lines, witnessJob(t, fmt.Sprint(prefix, i)))
		}
		submit(t, q, "", lines...)
	}
	batch("b")
	filler = fill(t, cache)
	healthy(8)
	os.Remove(filler)
	if out, err := exec.Command("mount", "-o", "remount,ro", cache).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v %s", err, out)
	}
	batch("c")
	healthy(12)
	if out, err := exec.Command("mount", "-o", "remount,rw", cache).CombinedOutput(); err != nil {
		t.Fatalf("remount read-write: %v %s", err, out)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 1 || ents[0].Name() != "circuits" {
		t.Errorf("the cache holds %v, want only circuits/", ents)
	}
	noneLeft(t, q)
}
