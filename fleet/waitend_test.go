package fleet_test

import (
	"testing"
	"time"
)

// waitEnd is how long a test waits for something it expects to happen (a
// result stored, a job taken, a backlog drained): until shortly before the
// test binary's own deadline (go test -timeout), not a fixed few seconds, so
// that a machine three times slower, or busy with other work, does not fail
// a test whose fleet behaves; only one that never gets there fails, with
// its message, before go test kills the binary.
func waitEnd(t testing.TB) time.Time {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			return end.Add(-time.Minute)
		}
	}
	return time.Now().Add(10 * time.Minute)
}
