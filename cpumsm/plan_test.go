package cpumsm

import "testing"

// TestFreeListBound checks that a free list keeps at most its max values
// and counts their bytes in kept.
func TestFreeListBound(t *testing.T) {
	l := newDigitsList(2)
	a, b, c := digitsFor(l, 10), digitsFor(l, 20), digitsFor(l, 30)
	if l.kept.Load() != 0 {
		t.Fatalf("kept %d bytes with nothing put", l.kept.Load())
	}
	l.put(a)
	l.put(b)
	l.put(c) // beyond the bound: dropped
	if got := l.kept.Load(); got != 2*(10+20) {
		t.Errorf("kept %d bytes, want %d (the first two buffers)", got, 2*(10+20))
	}
	if d := digitsFor(l, 15); cap(*d) != 20 {
		t.Errorf("took a buffer of cap %d, want the last kept (20)", cap(*d))
	}
	if got := l.kept.Load(); got != 2*10 {
		t.Errorf("kept %d bytes after a get, want %d", got, 2*10)
	}
	if d := digitsFor(l, 15); cap(*d) < 15 || l.kept.Load() != 0 {
		t.Errorf("a buffer too small was not grown (cap %d) or still counted (%d)", cap(*d), l.kept.Load())
	}
}

// TestPlan checks that plan covers the points once, in order, and splits
// where the tasks outnumber the windows (gnark-crypto's rule), not where
// they do not.
func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		n, tasks int
		split    bool
	}{{1 << 16, 2, false}, {1 << 16, 20, false}, {1 << 16, 64, true}, {1 << 20, 16, false}, {1 << 20, 1024, true}, {1, 1024, false}} {
		parts := plan(nil, 0, tc.n, tc.tasks, 254)
		if (len(parts) > 1) != tc.split {
			t.Errorf("n %d, %d tasks: %d parts, split %v", tc.n, tc.tasks, len(parts), tc.split)
		}
		lo := 0
		for _, p := range parts {
			if p.lo != lo || p.hi < p.lo || p.c < 4 || p.c > 16 {
				t.Errorf("n %d, %d tasks: part %+v after %d", tc.n, tc.tasks, p, lo)
			}
			lo = p.hi
		}
		if lo != tc.n {
			t.Errorf("n %d, %d tasks: parts end at %d", tc.n, tc.tasks, lo)
		}
	}
	for c := 4; c <= 16; c++ {
		for _, bits := range []int{254, 255} {
			if l := lastC(c, bits); l < 1 || l > 16 || (windows(c, bits)-1)*c+l-1 < bits {
				t.Errorf("c %d, %d bits: last window of %d bits", c, bits, l)
			}
		}
	}
}
