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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := w.Run(ctx, ctx)
	if err == nil || !strings.Contains(err.Error(), "stopped taking jobs: this worker's disk") || !strings.Contains(err.Error(), want) {
		t.Fatalf("worker on a sick disk: Run = %v, want it to stop taking jobs for its disk (%s)", err, want)
	}
	if info, _ := q.Results.Info(context.Background()); info.State.Msgs != results {
		t.Fatalf("%d results published by a worker whose disk failed", info.State.Msgs-results)
	}
}

// A worker whose cache fills up hands back the job it could not start and
// takes no more; so does one whose cache is read-only. Neither answers a
// job; a healthy worker then proves them all. Both seams are tried: the
// circuit's fetch into an empty cache, and a witness's download once the
// circuit is cached. Before, the fetch's "no space left on device" failed
// every job for good, and the download's handed each back and took more.
func TestWorkerDiskFaultsHandBack(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	cache := mountTmpfs(t, 8<<20)
	for _, d := range []string{"circuits", "witness"} {
		os.MkdirAll(filepath.Join(cache, d), 0o755)
	}
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

	// the witness's download meets a full disk, then a read-only one
	lines = lines[:0]
	for i := range 4 {
		lines = append(lines, witnessJob(t, fmt.Sprint("b", i)))
	}
	submit(t, q, "", lines...)
	filler = fill(t, cache)
	resultsBefore, _ := q.Results.Info(context.Background())
	sickDiskWorkerAfter(t, q, cache, "no space left on device", resultsBefore.State.Msgs)
	os.Remove(filler)
	if out, err := exec.Command("mount", "-o", "remount,ro", cache).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v %s", err, out)
	}
	sickDiskWorkerAfter(t, q, cache, "read-only file system", resultsBefore.State.Msgs)
	if out, err := exec.Command("mount", "-o", "remount,rw", cache).CombinedOutput(); err != nil {
		t.Fatalf("remount read-write: %v %s", err, out)
	}
	healthy(8)
	noneLeft(t, q)
}
