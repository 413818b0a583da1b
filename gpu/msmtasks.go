package gpu

import "math"

// msmNbTasks is the NbTasks to hand an MSM of n scalars of bits (the
// curve's fr.Bits) that may use up to want goroutines on a machine of cpus:
// cpumsm's, which follows gnark-crypto's MultiExp in what follows (its
// window, its halving, all windows at once from as many tasks as cores).
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
func msmNbTasks(n, want, cpus, bits int) int {
	w := msmWindows(n, bits)
	if (want >= w || want >= cpus) && !msmSplits(n, w, bits) {
		return w
	}
	for t := min(max(want, 1), w); t > 1; t-- {
		if !msmSplits(n, t, bits) {
			return t
		}
	}
	return 1
}

// msmWindows is how many c-bit windows gnark-crypto's MSM of n points runs,
// for the c it picks.
func msmWindows(n, bits int) int { return int(msmChunks(msmBestC(n, bits), bits)) }

// The rest mirrors gnark-crypto v0.21's MultiExp (identical for G1 and G2,
// and for BN254 and BLS12-381 but for fr.Bits);
// gpu's tests pin that version, so that an upgrade re-checks this copy.

// msmBestC is gnark-crypto's window: the c of 4..16 least in
// (bits+1)·(n + 2^c)/c.
func msmBestC(n, bits int) uint64 {
	var best uint64
	least := math.MaxFloat64
	for c := uint64(4); c <= 16; c++ {
		cost := float64((bits+1)*(n+(1<<c))) / float64(c)
		if cost < least {
			least, best = cost, c
		}
	}
	return best
}

func msmChunks(c uint64, bits int) uint64 { return (uint64(bits) + c - 1) / c }

// msmSplits tells whether gnark-crypto halves an MSM of n points given
// tasks: its "wall time" of the halves' windows, two at a time, against
// the whole's.
func msmSplits(n, tasks, bits int) bool {
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
	c := msmBestC(n, bits)
	pre := cost(int(msmChunks(c, bits)), n+(1<<c))
	c2 := msmBestC(n/2, bits)
	post := cost(2*int(msmChunks(c2, bits)), n/2+(1<<c2))
	return post < pre
}
