package solve

import (
	"sync"
	"unsafe"
)

// minClearBytes is the least a goroutine of Clear zeroes: about 0.4 ms of
// one core's memclr, against a goroutine's microsecond.
const minClearBytes = 4 << 20

// Clear zeroes x, split over up to tasks goroutines in pieces of at least
// minClearBytes (one, in the caller's goroutine, for less). The solver's
// pooled a, b, c are 1.5 GiB at 2^24 constraints: one core's memclr for
// about 150 ms before the first level, a few ms over the cores, where the
// host's memory bandwidth bounds it.
func Clear[T any](x []T, tasks int) {
	var zero T
	size := max(int(unsafe.Sizeof(zero)), 1)
	pieces := min(tasks, len(x)*size/minClearBytes)
	if pieces <= 1 {
		clear(x)
		return
	}
	each := (len(x) + pieces - 1) / pieces
	var wg sync.WaitGroup
	for lo := each; lo < len(x); lo += each {
		wg.Add(1)
		go func(p []T) {
			defer wg.Done()
			clear(p)
		}(x[lo:min(lo+each, len(x))])
	}
	clear(x[:each])
	wg.Wait()
}
