package solve

import (
	"fmt"
	"testing"
)

// Clear zeroes every element, whatever the split: lengths below one piece,
// around the piece's bound, odd ones over many pieces; one task or more.
func TestClearZeroesEverything(t *testing.T) {
	per := minClearBytes / 32 // [4]uint64 elements a piece
	for _, n := range []int{0, 1, per - 1, per, 2*per - 1, 2 * per, 2*per + 1, 7*per + 333} {
		for _, tasks := range []int{0, 1, 2, 3, 16} {
			t.Run(fmt.Sprintf("%d/%d", n, tasks), func(t *testing.T) {
				x := make([][4]uint64, n)
				for i := range x {
					x[i] = [4]uint64{uint64(i) + 1, 2, 3, 4}
				}
				Clear(x, tasks)
				for i := range x {
					if x[i] != ([4]uint64{}) {
						t.Fatalf("element %d of %d not zero: %v", i, n, x[i])
					}
				}
			})
		}
	}
	b := []bool{true, true, true}
	Clear(b, 4)
	if b[0] || b[1] || b[2] {
		t.Fatalf("flags %v", b)
	}
}
