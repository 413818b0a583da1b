package gpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	blsfft "github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	bnfft "github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// BenchmarkCPUHeavyOps runs the CPU backend's tail MSMs (A, B₁, K in G1)
// and B_G2's G2 MSM for several jobs at once, as a stream's tail-msm and
// b-g2 workers do, under each bound on the heavy operations running at
// once (LimitHeavy; 0: none, the backend before the bound) and MSM task
// count (0: one per core), and reports the process CPU ms a job and the
// wall ms a job. Bases are 4096 distinct
// points repeated (the MSM's cost is in its scalars' buckets), scalars
// random and dense.
//
//	go test -run '^$' -bench 'CPUHeavyOps/.*/2\^20' -benchtime 2x ./gpu
func BenchmarkCPUHeavyOps(b *testing.B) {
	for _, id := range []curve.ID{curve.BN254, curve.BLS12_381} {
		for _, lg := range []int{16, 18, 20} {
			var key *proofdata.Key
			var v *proofdata.Vectors
			for _, r := range []struct {
				jobs, heavy int
				halfTasks   bool // each MSM half the cores (gnark-crypto then runs that many windows at a time)
			}{{1, 0, false}, {6, 0, false}, {6, 1, false}, {6, 2, false}, {6, 3, false}, {6, 0, true}, {6, 4, true}} {
				workers, limit := r.jobs, r.heavy
				tasks := 0
				if r.halfTasks {
					tasks = max(1, runtime.NumCPU()/2)
				}
				b.Run(fmt.Sprintf("%s/2^%d/jobs=%d/heavy=%d/tasks=%d", id, lg, workers, limit, tasks), func(b *testing.B) {
					if key == nil {
						key, v = heavyBenchJob(id, 1<<lg)
					}
					c := NewCPU(tasks, tasks)
					c.LimitHeavy(limit)
					r, err := c.Load(key)
					if err != nil {
						b.Fatal(err)
					}
					ctx := context.Background()
					s, err := c.Transfer(ctx, r, v)
					if err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					cpu0, t0 := processCPU(), time.Now()
					for range b.N {
						var wg sync.WaitGroup
						errs := make([]error, workers)
						for w := range workers {
							wg.Add(1)
							go func() {
								defer wg.Done()
								if _, err := c.TailMSMG1(ctx, s); err != nil {
									errs[w] = err
									return
								}
								_, errs[w] = c.MSMG2(ctx, s)
							}()
						}
						wg.Wait()
						for _, err := range errs {
							if err != nil {
								b.Fatal(err)
							}
						}
					}
					jobs := float64(b.N * workers)
					b.ReportMetric(float64(processCPU()-cpu0)/1e6/jobs, "cpu-ms/job")
					b.ReportMetric(float64(time.Since(t0))/1e6/jobs, "wall-ms/job")
				})
			}
		}
	}
}

// heavyBenchJob is a key of n A, B₁, K and B₂ bases and a job whose three
// queries are n random scalars each.
func heavyBenchJob(id curve.ID, n int) (*proofdata.Key, *proofdata.Vectors) {
	const distinct = 4096
	w := make([]proofdata.Scalar, n)
	var key *proofdata.Key
	switch id {
	case curve.BN254:
		s := make([]bnfr.Element, n)
		for i := range s {
			s[i].SetRandom()
		}
		_, _, g1, g2 := bn254.Generators()
		p1 := bn254.BatchScalarMultiplicationG1(&g1, s[:distinct])
		p2 := bn254.BatchScalarMultiplicationG2(&g2, s[:distinct])
		a, b2 := make([]bn254.G1Affine, n), make([]bn254.G2Affine, n)
		for i := range n {
			a[i], b2[i] = p1[i%distinct], p2[i%distinct]
		}
		copy(w, proofdata.Scalars(s))
		key = proofdata.NewKey(id, proofdata.HDivideByZ, 4, &proofdata.Bases[bn254.G1Affine, bn254.G2Affine, bnfft.Domain]{Domain: bnfft.NewDomain(4), A: a, B1: a, K: a, B2: b2})
	case curve.BLS12_381:
		s := make([]blsfr.Element, n)
		for i := range s {
			s[i].SetRandom()
		}
		_, _, g1, g2 := bls12381.Generators()
		p1 := bls12381.BatchScalarMultiplicationG1(&g1, s[:distinct])
		p2 := bls12381.BatchScalarMultiplicationG2(&g2, s[:distinct])
		a, b2 := make([]bls12381.G1Affine, n), make([]bls12381.G2Affine, n)
		for i := range n {
			a[i], b2[i] = p1[i%distinct], p2[i%distinct]
		}
		copy(w, proofdata.Scalars(s))
		key = proofdata.NewKey(id, proofdata.HDivideByZ, 4, &proofdata.Bases[bls12381.G1Affine, bls12381.G2Affine, blsfft.Domain]{Domain: blsfft.NewDomain(4), A: a, B1: a, K: a, B2: b2})
	default:
		panic(fmt.Sprintf("heavyBenchJob: no %s", id))
	}
	sel := make([]uint32, n)
	for j := range sel {
		sel[j] = uint32(j)
	}
	v := &proofdata.Vectors{}
	for _, q := range []*proofdata.Query{&v.QA, &v.QB, &v.QK} {
		proofdata.Classify(q, proofdata.One(id), w, sel, make([]uint64, (n+63)/64), make([]uint32, n), make([]proofdata.Scalar, n))
	}
	return key, v
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
