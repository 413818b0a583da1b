package cpumsm

import (
	"os"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/curve"
)

var bnBitsTasks = curve.BN254.Params().ScalarBits

// Tasks and plan follow gnark-crypto's split model; an upgrade of
// gnark-crypto must re-check them (bestC, splits) against its multiexp.go.
func TestMSMSplitModelIsGnarkCryptos(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	const want = "github.com/consensys/gnark-crypto v0.21.0"
	if !strings.Contains(string(mod), want+"\n") {
		t.Fatalf("go.mod does not require %s: re-check cpumsm's plan.go and tasks.go against gnark-crypto's ecc/bn254/multiexp.go (they follow v0.21.0's)", want)
	}
}

func TestMSMSplitModel(t *testing.T) {
	for _, tc := range []struct {
		n, tasks int
		c        int
		split    bool
	}{
		{1 << 20, 16, 16, false}, {1 << 20, 32, 16, true}, {1 << 20, 5, 16, true}, {1 << 20, 8, 16, false},
		{1_000_000, 14, 16, true}, {1 << 18, 16, 15, true}, {1 << 18, 17, 15, false}, {1 << 16, 16, 13, true},
	} {
		if c := bestC(tc.n, bnBitsTasks); c != tc.c {
			t.Errorf("window of %d points: %d bits, want %d", tc.n, c, tc.c)
		}
		if s := splits(tc.n, tc.tasks, bnBitsTasks); s != tc.split {
			t.Errorf("%d points, %d tasks: split %v, want %v", tc.n, tc.tasks, s, tc.split)
		}
	}
}

func TestMSMNbTasksNeverSplits(t *testing.T) {
	for _, bits := range []int{bnBitsTasks, curve.BLS12_381.Params().ScalarBits} {
		testMSMNbTasksNeverSplits(t, bits)
	}
}

func testMSMNbTasksNeverSplits(t *testing.T, bits int) {
	for _, n := range []int{1, 2, 3, 100, 1 << 10, 1 << 16, 200_000, 1 << 18, 1_000_000, 1 << 20, 1 << 22, 1 << 24} {
		w := windows(bestC(n, bits), bits)
		for _, cpus := range []int{1, 2, 16, 64} {
			for want := 0; want <= 40; want++ {
				got := Tasks(n, want, cpus, bits)
				if got < 1 || got > max(want, w, 1) {
					t.Fatalf("%d points, want %d, %d cpus: %d tasks", n, want, cpus, got)
				}
				if got > 1 && splits(n, got, bits) {
					t.Fatalf("%d points, want %d, %d cpus: %d tasks splits the MSM", n, want, cpus, got)
				}
				if (want >= w || want >= cpus) && got != w {
					t.Fatalf("%d points, want %d, %d cpus: %d tasks, want one a window (%d)", n, want, cpus, got, w)
				}
				if want < w && want < cpus && got > max(want, 1) {
					t.Fatalf("%d points, want %d, %d cpus: %d tasks, more than wanted", n, want, cpus, got)
				}
			}
		}
	}
}
