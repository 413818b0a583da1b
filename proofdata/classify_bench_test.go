package proofdata

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/zkpipe/zkpipe/curve"
)

// BenchmarkClassify classifies one query of 2^20 and 2^22 scalars, bits'
// shape (sparse: mostly zeros and ones) and mulchain's (dense), the wires
// in a shuffled order, by one goroutine (serial: Classify, the transfer's
// way before it split) and by GOMAXPROCS (ClassifyWith). Compare -cpu 1,2
// (…,16 on the H200): the serial figure is one core's whatever the host.
//
//	go test -run '^$' -bench Classify -cpu 1,2 ./proofdata
func BenchmarkClassify(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	one := One(curve.BN254)
	for _, logn := range []int{20, 22} {
		n := 1 << logn
		for _, kind := range []string{"sparse", "dense"} {
			w, sel := classifyInput(r, n, kind)
			ones, idx, vals := make([]uint64, (n+63)/64), make([]uint32, n), make([]Scalar, n)
			for _, way := range []string{"serial", "parts"} {
				b.Run(fmt.Sprintf("2^%d/%s/%s", logn, kind, way), func(b *testing.B) {
					b.SetBytes(int64(n) * ScalarBytes)
					var q Query
					for range b.N {
						if way == "serial" {
							Classify(&q, one, w, sel, ones, idx, vals)
						} else {
							ClassifyWith(&q, one, w, sel, ones, idx, vals, runtime.GOMAXPROCS(0))
						}
					}
				})
			}
		}
	}
}
