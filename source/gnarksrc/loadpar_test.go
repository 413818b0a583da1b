package gnarksrc

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
)

// checkInfinity, over all cores, accepts the infinity flags keygen gives a
// circuit and refuses each flag flipped, naming the first wire at fault
// whatever range of wires a core took, on 1, 3 and all cores.
func TestCheckInfinityNamesTheFirstWire(t *testing.T) {
	b, err := circuits.Lookup("bits")
	if err != nil {
		t.Fatal(err)
	}
	ccsI, err := b.CompileOn(curve.BN254, 1<<17) // over one range of 2^16 wires
	if err != nil {
		t.Fatal(err)
	}
	pkI, _, err := keygen.Setup(ccsI)
	if err != nil {
		t.Fatal(err)
	}
	ccs, pk := ccsI.(*cs.R1CS), pkI.(*groth16bn254.ProvingKey)
	nbWires := len(pk.InfinityA)
	for _, procs := range []int{1, 3, runtime.NumCPU()} {
		old := runtime.GOMAXPROCS(procs)
		if err := checkInfinity(&ccs.System, nbWires, pk.InfinityA, pk.InfinityB); err != nil {
			t.Fatalf("%d cores: %v", procs, err)
		}
		for _, flip := range [][]int{{0}, {nbWires - 1}, {70000, 3}, {nbWires / 2, nbWires - 2}} {
			for _, which := range []string{"A", "B"} {
				a, b := append([]bool(nil), pk.InfinityA...), append([]bool(nil), pk.InfinityB...)
				f := a
				if which == "B" {
					f = b
				}
				first := nbWires
				for _, w := range flip {
					f[w] = !f[w]
					first = min(first, w)
				}
				err := checkInfinity(&ccs.System, nbWires, a, b)
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(wire %d)", first)) {
					t.Fatalf("%d cores, %s flipped at %v: %v, want wire %d named", procs, which, flip, err, first)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// selectWires is the wires a loop of appends selects, in order, nil when
// none, from any first wire, across its ranges' ends.
func TestSelectWiresIsTheAppendLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 1))
	for _, c := range []struct{ from, n int }{{0, 0}, {0, 1}, {3, 3}, {5, 1 << 16}, {0, 1<<16 + 1}, {7, 3<<16 + 5}} {
		for _, density := range []float64{0, 0.5, 1} {
			keep := make([]bool, c.n)
			for i := range keep {
				keep[i] = rng.Float64() < density
			}
			var want []uint32
			for i := c.from; i < c.n; i++ {
				if keep[i] {
					want = append(want, uint32(i))
				}
			}
			got := selectWires(c.from, c.n, func(i int) bool { return keep[i] })
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("from %d, n %d, density %v: %d wires selected, want %d", c.from, c.n, density, len(got), len(want))
			}
		}
	}
}
