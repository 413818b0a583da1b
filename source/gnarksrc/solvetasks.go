package gnarksrc

import (
	"runtime"
	"sync/atomic"

	"github.com/consensys/gnark/constraint/solver"
)

// solvesInFlight counts the witness solves running in this process, of
// every circuit: they share one machine's cores.
var solvesInFlight atomic.Int64

// solveOptions is what one solve runs with, and the release of its place
// among the solves in flight. With Options.SolveTasks unset, a solve takes
// its share of the cores among those running as it starts (itself
// counted): alone, every core; the fourth of four, a quarter. gnark's
// schedule waits for every task of a level before the next (11,551 levels
// at 2^27), so four solves of sixteen goroutines each on sixteen cores
// spend their time descheduled at those barriers: notes/seed27.md measured
// such a stream's synthesis at 2.3× the solve's CPU seconds alone.
func (s *Source) solveOptions() ([]solver.Option, func()) {
	if s.opts.SolveTasks > 0 {
		return s.solve, func() {}
	}
	n := solvesInFlight.Add(1)
	opts := append(s.solve[:len(s.solve):len(s.solve)], solver.WithNbTasks(coresShare(runtime.GOMAXPROCS(0), int(n))))
	return opts, func() { solvesInFlight.Add(-1) }
}

// coresShare is one of n solves' share of procs cores, rounded up (the
// cores a solve leaves idle at its levels' ends are the others'), at least
// one.
func coresShare(procs, n int) int {
	if n < 1 {
		n = 1
	}
	return max(1, (procs+n-1)/n)
}
