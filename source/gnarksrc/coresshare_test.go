package gnarksrc

import "testing"

// A solve's share of the cores falls as solves pile up, never to zero,
// and a finished solve gives its place back.
func TestSolveTakesItsShareOfTheCores(t *testing.T) {
	for _, c := range []struct{ procs, n, want int }{
		{16, 1, 16}, {16, 2, 8}, {16, 3, 6}, {16, 4, 4}, {16, 5, 4}, {16, 16, 1}, {16, 40, 1},
		{2, 1, 2}, {2, 3, 1}, {1, 1, 1}, {16, 0, 16},
	} {
		if got := coresShare(c.procs, c.n); got != c.want {
			t.Errorf("coresShare(%d cores, %d solves) = %d, want %d", c.procs, c.n, got, c.want)
		}
	}
	s := &Source{}
	before := solvesInFlight.Load()
	var dones []func()
	for i := 0; i < 3; i++ {
		opts, done := s.solveOptions()
		if len(opts) != 1 {
			t.Fatalf("solve %d: %d options, want the task count alone", i, len(opts))
		}
		dones = append(dones, done)
	}
	if got := solvesInFlight.Load() - before; got != 3 {
		t.Fatalf("%d solves counted in flight, want 3", got)
	}
	for _, d := range dones {
		d()
	}
	if got := solvesInFlight.Load() - before; got != 0 {
		t.Fatalf("%d solves still counted after all ended", got)
	}
	s.opts.SolveTasks = 5
	if opts, done := s.solveOptions(); len(opts) != 0 || solvesInFlight.Load() != before {
		t.Fatalf("a set task count: %d options, in flight %d (want the source's own, uncounted)", len(opts), solvesInFlight.Load()-before)
	} else {
		done()
	}
}
