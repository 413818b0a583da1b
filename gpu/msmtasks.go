package gpu

import (
	"math"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// msmNbTasks is the NbTasks to hand gnark-crypto's MultiExp for an MSM of n
// points that may use up to want goroutines on a machine of cpus.
//
// gnark-crypto (v0.21, ecc/bn254/multiexp.go) halves an MSM, and recurses,
// whenever its cost model says two halves would finish sooner on NbTasks
// cores than the whole: more windows than tasks leave a last round half
// empty. Each split adds a set of bucket reductions and narrows the
// windows: 6% more group operations for 2^20 points at 3, 5, 7, 11, 12,
// 15 or 32 tasks (12.5% at 13 or 14), 12–18% for 2^18 points at 8 or 13–16
// tasks (16 being one per core on the H200 machine). That buys the latency
// of one MSM alone on idle cores; in a stream, other jobs' stages fill the
// cores a last round leaves, and a split is only more work. So: when want
// covers every window, or every core (gnark-crypto then runs all windows
// at once whatever NbTasks says), one task a window, which never splits;
// else the most tasks ≤ want that the model does not split at (fewer than
// cpus: gnark-crypto runs that many windows at a time).
func msmNbTasks(n, want, cpus int) int {
	w := msmWindows(n)
	if (want >= w || want >= cpus) && !msmSplits(n, w) {
		return w
	}
	for t := min(max(want, 1), w); t > 1; t-- {
		if !msmSplits(n, t) {
			return t
		}
	}
	return 1
}

// msmWindows is how many c-bit windows gnark-crypto's MSM of n points runs,
// for the c it picks.
func msmWindows(n int) int { return int(msmChunks(msmBestC(n))) }

// The rest mirrors gnark-crypto v0.21's MultiExp (identical for G1 and G2);
// gpu's tests pin that version, so that an upgrade re-checks this copy.

// msmBestC is gnark-crypto's window: the c of 4..16 least in
// (fr.Bits+1)·(n + 2^c)/c.
func msmBestC(n int) uint64 {
	var best uint64
	least := math.MaxFloat64
	for c := uint64(4); c <= 16; c++ {
		cost := float64((fr.Bits+1)*(n+(1<<c))) / float64(c)
		if cost < least {
			least, best = cost, c
		}
	}
	return best
}

func msmChunks(c uint64) uint64 { return (fr.Bits + c - 1) / c }

// msmSplits tells whether gnark-crypto halves an MSM of n points given
// tasks: its "wall time" of the halves' windows, two at a time, against
// the whole's.
func msmSplits(n, tasks int) bool {
	cost := func(chunks, perChunk int) int {
		total := chunks
		for chunks >= tasks {
			chunks -= tasks
			total += perChunk
		}
		if chunks > 0 {
			total += perChunk
		}
		return total
	}
	c := msmBestC(n)
	pre := cost(int(msmChunks(c)), n+(1<<c))
	c2 := msmBestC(n / 2)
	post := cost(2*int(msmChunks(c2)), n/2+(1<<c2))
	return post < pre
}
