package cpumsm

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// MaxTasks is the most tasks an MSM takes, as gnark-crypto's MultiExp
// (which refuses more).
const MaxTasks = 1024

// part is a range [lo, hi) of an MSM's points summed with its own window c:
// an MSM is one part, or several where plan halves it.
type part struct {
	lo, hi int
	c      int
	digits []uint16 // the part's digits, window j's at [j·n, (j+1)·n), n = hi−lo
}

// bestC is gnark-crypto's window for n points of bits-bit scalars: the c of
// 4…16 least in (bits+1)(n + 2^c)/c, group operations per window summed
// over the windows.
func bestC(n, bits int) int {
	best, least := 4, math.MaxFloat64
	for c := 4; c <= 16; c++ {
		if cost := float64((bits+1)*(n+1<<c)) / float64(c); cost < least {
			best, least = c, cost
		}
	}
	return best
}

// windows is how many c-bit windows a bits-bit scalar spans.
func windows(c, bits int) int { return (bits + c - 1) / c }

// lastC is the last window's width: it takes the carry of the window
// before it and borrows from none, so it is c+1 less the bits it has spare.
func lastC(c, bits int) int { return c + 1 - (windows(c, bits)*c - bits) }

// batchSize is how many affine additions share one inversion in a window of
// c bits (gnark-crypto's sizes), or 0 where c is too small for the
// batch-affine method to pay.
func batchSize(c int) int {
	switch c {
	case 10:
		return 80
	case 11:
		return 150
	case 12:
		return 200
	case 13:
		return 350
	case 14:
		return 400
	case 15:
		return 500
	case 16:
		return 640
	}
	return 0
}

// splits tells whether gnark-crypto's cost model halves an MSM of n points
// on tasks: a "wall time" of the windows, tasks at a time, plus one per
// window for the reduction, of the two halves (⌈tasks/2⌉ tasks each)
// against the whole.
func splits(n, tasks, bits int) bool {
	wall := func(windows, tasks, perWindow int) int {
		cost := windows
		for windows >= tasks {
			windows -= tasks
			cost += perWindow
		}
		if windows > 0 {
			cost += perWindow
		}
		return cost
	}
	c, ch := bestC(n, bits), bestC(n/2, bits)
	return wall(2*windows(ch, bits), tasks, n/2+1<<ch) < wall(windows(c, bits), tasks, n+1<<c)
}

// plan appends to parts the ranges MultiExp sums, splitting [lo, hi) in
// half (and each half again) where splits says two halves on ⌈tasks/2⌉
// tasks each finish before the whole on tasks.
func plan(parts []part, lo, hi, tasks, bits int) []part {
	n := hi - lo
	if splits(n, tasks, bits) {
		tasks = (tasks + 1) / 2
		parts = plan(parts, lo, lo+n/2, tasks, bits)
		return plan(parts, lo+n/2, hi, tasks, bits)
	}
	return append(parts, part{lo: lo, hi: hi, c: bestC(n, bits)})
}

// run calls work(w, t) for t = 0…n−1 on min(workers, n) goroutines
// w = 0, 1, …, each taking the next t as it finishes one, and returns when
// all have.
func run(workers, n int, work func(w int, next func() (int, bool))) {
	workers = min(workers, n)
	if workers <= 0 {
		return
	}
	if workers == 1 {
		i := 0
		work(0, func() (int, bool) { i++; return i - 1, i <= n })
		return
	}
	var t atomic.Int64
	next := func() (int, bool) {
		i := int(t.Add(1) - 1)
		return i, i < n
	}
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := range workers {
		go func() {
			defer wg.Done()
			work(w, next)
		}()
	}
	wg.Wait()
}

// partitionTasks is how many goroutines cut the scalars into digits: no
// more than the cores (gnark-crypto's rule).
func partitionTasks(tasks int) int { return max(1, min(tasks, runtime.NumCPU())) }

// freeList is a bounded stack of scratch values kept across calls. A
// sync.Pool would not do: it drops its contents at every other
// collection, which is the garbage this package exists to avoid.
type freeList[T any] struct {
	mu    sync.Mutex
	max   int
	items []*T
	kept  atomic.Int64 // bytes of items
	size  func(*T) int64
}

// get pops a kept value, or returns nil.
func (l *freeList[T]) get() *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) == 0 {
		return nil
	}
	v := l.items[len(l.items)-1]
	l.items[len(l.items)-1] = nil
	l.items = l.items[:len(l.items)-1]
	l.kept.Add(-l.size(v))
	return v
}

// put keeps v if the list holds fewer than its max, else drops it to the
// collector.
func (l *freeList[T]) put(v *T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) >= l.max {
		return
	}
	l.items = append(l.items, v)
	l.kept.Add(l.size(v))
}

// digitsList keeps the scalars' digits: one buffer per MSM in flight.
func newDigitsList(max int) *freeList[[]uint16] {
	return &freeList[[]uint16]{max: max, size: func(d *[]uint16) int64 { return int64(cap(*d)) * 2 }}
}

// digitsFor returns a buffer of n digits from l, grown if the kept one is
// smaller. Its contents are not cleared.
func digitsFor(l *freeList[[]uint16], n int) *[]uint16 {
	d := l.get()
	if d == nil {
		d = new([]uint16)
	}
	if cap(*d) < n {
		*d = make([]uint16, n)
	}
	*d = (*d)[:n]
	return d
}

// spread calls f on up to tasks ranges [lo, hi) covering [0, n), at once.
func spread(n, tasks int, f func(lo, hi int)) {
	tasks = max(1, min(tasks, n))
	each := (n + tasks - 1) / tasks
	run(tasks, tasks, func(_ int, next func() (int, bool)) {
		for t, ok := next(); ok; t, ok = next() {
			if lo := t * each; lo < n {
				f(lo, min(n, lo+each))
			}
		}
	})
}

// selector says where window j's c bits lie in a scalar's four 64-bit
// words: at index, shifted by shift, and, where they straddle two words,
// the next word's low bits (maskHigh) shifted up by shiftHigh.
type selector struct {
	index, shift, shiftHigh uint64
	mask, maskHigh          uint64
	multiWord               bool
}

// selectors fills sel (of the windows' count) for c-bit windows of bits-bit
// scalars in limbs words.
func selectors(sel []selector, c, limbs int) {
	cc := uint64(c)
	mask := uint64(1)<<cc - 1
	for j := range sel {
		jc := uint64(j) * cc
		s := selector{index: jc / 64}
		s.shift = jc - s.index*64
		s.mask = mask << s.shift
		s.multiWord = 64%cc != 0 && s.shift > 64-cc && s.index < uint64(limbs-1)
		if s.multiWord {
			high := s.shift - (64 - cc)
			s.maskHigh = 1<<high - 1
			s.shiftHigh = cc - high
		}
		sel[j] = s
	}
}

// digit is window j's value of scalar (its words, regular form) plus carry:
// the raw c-bit value, before the signed recoding.
func (s *selector) digit(scalar *[4]uint64) int {
	d := int((scalar[s.index] & s.mask) >> s.shift)
	if s.multiWord {
		d += int(scalar[s.index+1]&s.maskHigh) << s.shiftHigh
	}
	return d
}

// recode writes scalar's signed digits for windows sel to digits (window
// j's at j·stride): a digit d in 1…2^(c−1) is 2d ("add to bucket d−1"),
// a digit −d is 2(d−1)+1 ("subtract from bucket d−1"), 0 is no bucket; a digit above 2^(c−1) becomes d − 2^c and carries one into the
// next window. The last window borrows from none: its digit is 2d.
func recode(digits []uint16, stride int, scalar *[4]uint64, sel []selector, c int) {
	top := 1<<(c-1) - 1
	carry := 0
	last := len(sel) - 1
	for j := range last {
		d := carry + sel[j].digit(scalar)
		carry = 0
		if d > top {
			d -= 1 << c
			carry = 1
		}
		var b uint16
		switch {
		case d > 0:
			b = uint16(d) << 1
		case d < 0:
			b = uint16(-d-1)<<1 + 1
		}
		digits[j*stride] = b
	}
	digits[last*stride] = uint16(carry+sel[last].digit(scalar)) << 1
}

// windowStat is one window's work: how many points it adds (ops) and into
// how many distinct buckets (filled).
type windowStat struct{ ops, filled int }

// task is a window of a part to sum, or half of one (a window of much more
// work than its part's mean runs as two tasks).
type task struct {
	part, window int
	lo, hi       int  // its points, relative to the part's
	c            int  // the window's width: c, or lastC for the last
	affine       bool // batch-affine buckets, else extended Jacobian
}

// windowTasks lists parts' windows: stats[p][j] (nil where c ≤ 9, which never
// uses the affine buckets) chooses each window's method and splits the
// heavy ones (gnark-crypto's rules: affine from c = 10 when the window fills
// at least a batch of buckets; halves at 115% of the part's mean work).
func windowTasks(parts []part, stats [][]windowStat, bits int) []task {
	var ts []task
	for p, pt := range parts {
		w := windows(pt.c, bits)
		var total int
		for _, s := range stats[p] {
			total += s.ops
		}
		n := pt.hi - pt.lo
		for j := w - 1; j >= 0; j-- {
			t := task{part: p, window: j, hi: n, c: pt.c}
			if j == w-1 {
				t.c = lastC(pt.c, bits)
			}
			if stats[p] == nil {
				ts = append(ts, t)
				continue
			}
			s := stats[p][j]
			bs := batchSize(t.c)
			t.affine = bs > 0 && s.filled >= bs
			if total > 0 && s.ops*100*w >= 115*total {
				a, b := t, t
				a.hi, b.lo = n/2, n/2
				ts = append(ts, a, b)
				continue
			}
			ts = append(ts, t)
		}
	}
	return ts
}
