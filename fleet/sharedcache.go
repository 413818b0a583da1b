package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// The workers of one host share their cache (WorkerOptions.Cache): a
// circuit fetched by one is there for the others. Each circuit has a lock,
// CACHE/circuits/NAME/.lock (an flock, dropped by the kernel however its
// holder dies), that a worker holds exclusively from the fetch of the
// circuit's files to its load into the prover: a second worker of the host
// waits, then finds the files whole and fetches nothing, and no fetch of a
// newer push replaces a file that a load is reading.
const circuitLock = ".lock"

// lockPoll is how often a worker waiting for a circuit's lock tries it
// again.
const lockPoll = 100 * time.Millisecond

// lockCircuit takes circuit name's lock in cache (CACHE/circuits), waiting
// while another worker of the host holds it, at most as long as ctx; then
// it sweeps the temporary files that a fetch killed midway left in the
// circuit's directory (nobody else writes there while the lock is held).
func (w *Worker) lockCircuit(ctx context.Context, cache, name string) (unlock func(), err error) {
	dir := filepath.Join(cache, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("circuit %s: its lock: %w", name, err)
	}
	l := flock.New(filepath.Join(dir, circuitLock))
	ok, err := l.TryLock()
	if err == nil && !ok {
		w.logf("circuit %s: another worker of this host is fetching or loading it; waiting for it", name)
		ok, err = l.TryLockContext(ctx, lockPoll)
	}
	if err != nil || !ok {
		l.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("circuit %s: its lock %s: %w", name, l.Path(), err)
	}
	sweepFetches(dir)
	return func() { l.Close() }, nil // Close unlocks
}

// sweepFetches removes the temporary files of fetches into dir that never
// finished (writeAtomic's .FILE.tmp-*): their worker was killed.
func sweepFetches(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-") && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, n))
		}
	}
}
