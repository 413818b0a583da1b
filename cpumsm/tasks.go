package cpumsm

// Tasks is the task count to hand an MSM of n scalars of bits (the curve's
// fr.Bits) that may use up to want goroutines on a machine of cpus. The
// MSM follows gnark-crypto's MultiExp in what follows (its window, its
// halving, all windows at once from as many tasks as cores).
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
func Tasks(n, want, cpus, bits int) int {
	w := windows(bestC(n, bits), bits)
	if (want >= w || want >= cpus) && !splits(n, w, bits) {
		return w
	}
	for t := min(max(want, 1), w); t > 1; t-- {
		if !splits(n, t, bits) {
			return t
		}
	}
	return 1
}
