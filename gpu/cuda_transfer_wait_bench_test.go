//go:build unix

package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/proofdata"
)

// BenchmarkCUDATransferBesideMSMs times TransferClassify of one job of
// 2^20 (mulchain's shape: every scalar significant, the same bytes on both
// curves) on an idle device and beside another job's tail and G2 MSMs
// run in a loop on the compute streams, for BN254 and BLS12-381, whose
// MSMs take 2.3× as long. The transfer's own work does not depend on the
// curve: if "beside" grows with the curve, the transfer waits for the
// device's kernels (a stream-ordered allocation reusing memory an MSM
// freed, whose stream it then waits for; the H2D copies queued behind
// kernels), which is what the H200's 2^20 streams suggest (transfer
// 170 ms on BLS12-381 against 66 on BN254). It reports the median ms a
// transfer and the MSMs that ran beside it.
//
//	ZKPIPE_CUDA_LIB=… go test -run '^$' -bench CUDATransferBesideMSMs -benchtime 20x ./gpu
func BenchmarkCUDATransferBesideMSMs(b *testing.B) {
	cuda := openCUDA(b) // skips without a library
	lg := 20
	if cuda.HostStandIn() != nil {
		lg = 10 // the stand-in's figures mean nothing; its code runs in CI time
	}
	n := 1 << lg
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		name string
		key  func() *proofdata.Key
		w    func(int) []proofdata.Scalar
	}{
		{"bn254", func() *proofdata.Key {
			return key254(proofdata.HDivideByZ, &bases254{Domain: domain(n, proofdata.HDivideByZ),
				A: tileG1(n, false), B1: tileG1(n, false), K: tileG1(n, false), Z: tileG1(n-1, false), B2: tileG2(n, false)})
		}, func(k int) []proofdata.Scalar { return proofdata.Scalars(scalars(r, k, dense)) }},
		{"bls12-381", func() *proofdata.Key {
			g1, g2 := tileBLS(n, false)
			return keyBLS(proofdata.HDivideByZ, &basesBLS{Domain: domainBLS(n, proofdata.HDivideByZ),
				A: g1, B1: g1, K: g1, Z: g1[:n-1], B2: g2})
		}, func(k int) []proofdata.Scalar { return proofdata.Scalars(scalarsBLS(r, k, dense)) }},
	} {
		res, err := cuda.Load(c.key())
		if err != nil {
			b.Fatal(err)
		}
		w := c.w(n + 2)
		sel := make([]uint32, n)
		for j := range sel {
			sel[j] = uint32(j + 2)
		}
		abc := c.w(n)
		transfer := func() (*proofdata.Staged, error) {
			v := &proofdata.Vectors{A: abc, B: abc, C: abc}
			return cuda.TransferClassify(context.Background(), res, v, w, sel, sel, sel, false)
		}
		for _, beside := range []bool{false, true} {
			name := fmt.Sprintf("%s/idle", c.name)
			if beside {
				name = fmt.Sprintf("%s/beside-msms", c.name)
			}
			b.Run(name, func(b *testing.B) {
				var (
					stop atomic.Bool
					msms atomic.Int64
					wg   sync.WaitGroup
					bg   error
				)
				if beside {
					s0, err := transfer()
					if err != nil {
						b.Fatal(err)
					}
					defer cuda.Free(s0)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for !stop.Load() {
							if _, err := cuda.TailMSMG1(context.Background(), s0); err != nil {
								bg = err
								return
							}
							if _, err := cuda.MSMG2(context.Background(), s0); err != nil {
								bg = err
								return
							}
							msms.Add(1)
						}
					}()
				}
				var ts []time.Duration
				for range b.N {
					t0 := time.Now()
					s, err := transfer()
					if err != nil {
						b.Fatal(err)
					}
					ts = append(ts, time.Since(t0))
					cuda.Free(s)
				}
				b.StopTimer() // the MSM round in flight is not the transfer's
				stop.Store(true)
				wg.Wait()
				if bg != nil {
					b.Fatal(bg)
				}
				b.ReportMetric(medianMS(ts), "median-ms")
				b.ReportMetric(float64(msms.Load())/float64(b.N), "msm-rounds/op")
			})
		}
		res.Close()
	}
}

func medianMS(ts []time.Duration) float64 {
	s := append([]time.Duration(nil), ts...)
	for i := range s { // insertion sort: a benchmark's few samples
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return float64(s[len(s)/2].Microseconds()) / 1000
}
