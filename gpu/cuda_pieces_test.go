package gpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// TestCUDAMSMPiecesMatchCPU: MSMs longer than a piece (CUDAConfig.MSMPieceLog,
// 2^10 scalars here) run a piece at a time with their window sums added
// (driver.cuh, msm_run_batch): H's dense MSM, the sparse and dense tails,
// B₂ in G2 and batched tails give the CPU's points on both curves, over
// the bases and over precomputed tables (whose dense pieces read the
// table's points from their offset on).
func TestCUDAMSMPiecesMatchCPU(t *testing.T) {
	pieces := gpu.WithConfig(gpu.CUDAConfig{MSMPieceLog: 10})
	for _, tc := range []struct {
		name string
		opts []gpu.CUDAOption
	}{
		{"bases", []gpu.CUDAOption{pieces, gpu.WithMSMTables(0)}},
		{"tables", []gpu.CUDAOption{pieces, gpu.WithMSMTables(1 << 30), gpu.WithMSMTableMinBases(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openOwn(t, tc.opts...)
			defer c.Close()
			r := rand.New(rand.NewPCG(21, 22))
			modes := map[int]string{mixed: "mixed", dense: "dense"}
			sizes, bls := []int{1000, 1025, 3000}, true
			if tc.name == "tables" {
				// a table's build is slow on the stand-in: BLS12-381's G2
				// above all, whose pieces the bases already run
				sizes, bls = []int{1100}, false
			}
			for _, size := range sizes {
				for _, mode := range []int{mixed, dense} {
					// -short (scripts/test): three pieces of BN254's sparse
					// tails, BLS12-381's dense vectors, and a table's dense
					// pieces, read from their offset
					if testing.Short() && (size < 1100 || tc.name == "tables" && mode != dense) {
						continue
					}
					if !testing.Short() || mode == mixed || tc.name == "tables" {
						t.Run(fmt.Sprintf("bn254/n=%d/%s", size, modes[mode]), func(t *testing.T) {
							compare(t, c, newFixture(r, size, mode, proofdata.HDivideByZ, true), true)
						})
					}
					if bls && (!testing.Short() || mode == dense) {
						t.Run(fmt.Sprintf("bls12-381/n=%d/%s", size, modes[mode]), func(t *testing.T) {
							compare(t, c, newFixtureBLS(r, size, mode, proofdata.HDivideByZ, true), mode == mixed)
						})
					}
				}
			}
		})
	}
}
