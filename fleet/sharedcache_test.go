package fleet_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// startWith starts zkpipe in dir with the test's environment less the
// variables unset names and plus env, as startCmd does.
func startWith(t *testing.T, bin, name, dir string, unset, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(unset, k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return startCmd(t, name, cmd)
}

// Two worker processes on one host with default flags (the same --cache,
// ~/.cache/zkpipe) both run and both prove: they share the fetched
// circuit, one copy in the cache with no fetch's leftovers. Before, the
// second exited: "--cache …: in use by another zkpipe".
func TestTwoWorkersShareTheDefaultCache(t *testing.T) {
	bin := binary(t)
	q, url := startQueue(t, 10*time.Second)
	pushChain(t, q)
	home := t.TempDir()
	// os.UserCacheDir: $XDG_CACHE_HOME, else $HOME/.cache
	unset := []string{"HOME", "XDG_CACHE_HOME", "ZKPIPE_CACHE"}
	var ws [2]*proc
	for i := range ws {
		ws[i] = startWith(t, bin, fmt.Sprint("worker", i), t.TempDir(), unset, []string{"HOME=" + home}, "worker", "--nats", url)
	}
	for i, w := range ws {
		for deadline := waitEnd(t); ; {
			b, _ := os.ReadFile(w.log)
			if strings.Contains(string(b), "zkpipe: worker on ") {
				break
			}
			select {
			case <-w.done:
				t.Fatalf("worker %d exited: %v\n%s", i, w.cmd.ProcessState, b)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("worker %d not up by the test's deadline:\n%s", i, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf(`{"id":"d%02d","circuit":"chain","generate":{"seed":%d}}`, i, i+1))
	}
	submit(t, q, "", lines...)
	for id, r := range waitResults(t, q, 20, 2*time.Minute) { // each proof checked with the circuit's key
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
	for i, w := range ws {
		select {
		case <-w.done:
			t.Errorf("worker %d exited: %v", i, w.cmd.ProcessState)
		default:
		}
		b, _ := os.ReadFile(w.log)
		if !strings.Contains(string(b), "circuit chain resident") {
			t.Errorf("worker %d never loaded circuit chain: it proved nothing", i)
		}
	}
	dir := filepath.Join(home, ".cache", "zkpipe", "circuits", "chain")
	for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the shared cache: %v", err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a fetch's leftover in the shared cache: %s", e.Name())
		}
	}
}

// A worker fetches a circuit only under the circuit's lock in its cache:
// while another worker of the host holds it, the job waits (nothing
// fetched, nothing proved); once it is free, the worker sweeps what a
// killed fetch left, fetches, loads and proves.
func TestCircuitFetchedUnderItsLock(t *testing.T) {
	q, _ := startQueue(t, 10*time.Second)
	pushChain(t, q)
	cache := t.TempDir()
	dir := filepath.Join(cache, "circuits", "chain")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "."+gnarksrc.PKFile+".tmp-12345")
	if err := os.WriteFile(stale, []byte("half a key"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := flock.New(filepath.Join(dir, ".lock"))
	if err := other.Lock(); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	p := newFake(t, 2)
	w := fleet.NewWorker(q, p, fleet.WorkerOptions{Cache: cache, Poll: 50 * time.Millisecond, Log: testLog{t}})
	runUntilEnd(t, w)
	submit(t, q, "", genJob("l1"))
	for deadline := waitEnd(t); w.InHand() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the worker took no job by the test's deadline")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // a fetch of chain takes some ms
	if _, err := os.Stat(filepath.Join(dir, gnarksrc.PKFile)); err == nil || p.HasCircuit("chain") || len(p.entered()) > 0 {
		t.Fatalf("circuit chain fetched (%v), loaded (%v) or a job proved (%v) while another worker held its lock", err == nil, p.HasCircuit("chain"), p.entered())
	}
	if err := other.Unlock(); err != nil {
		t.Fatal(err)
	}
	for id, r := range waitResults(t, q, 1, 60*time.Second) {
		if r.Error != "" {
			t.Errorf("%s: %s", id, r.Error)
		}
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a killed fetch's leftover is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, gnarksrc.PKFile)); err != nil {
		t.Errorf("circuit chain not in the cache: %v", err)
	}
}
