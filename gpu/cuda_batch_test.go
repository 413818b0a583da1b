package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
)

// batchJobs makes k jobs' vectors over key: query populations that differ
// from job to job (sparse with different indexes, dense, all zero — sparse
// with no significant scalar, and dense with every scalar zero —, all one),
// so that a batch mixes every kind of vector.
func batchJobs(r *rand.Rand, key *proofdata.Key, k int) []*proofdata.Vectors {
	size := key.Size.A
	query := func(j, q int) proofdata.Query {
		switch (j + q) % 6 {
		case 0, 1:
			return classify(scalars(r, size, mixed))
		case 2:
			return classify(scalars(r, size, dense))
		case 3:
			return classify(scalars(r, size, zeros)) // no significant scalar: an empty vector
		case 4: // dense, every scalar 0: every digit the sentinel
			return proofdata.Query{Len: size, Ones: make([]uint64, (size+63)/64), Dense: true, Vals: make([]proofdata.Scalar, size)}
		default:
			return classify(scalars(r, size, ones))
		}
	}
	out := make([]*proofdata.Vectors, k)
	for j := range out {
		out[j] = &proofdata.Vectors{QA: query(j, 0), QB: query(j, 1), QK: query(j, 2)}
	}
	return out
}

// TestCUDATailBatchMatchesSingles: one batched tail of k jobs of a circuit
// equals k single tails and the CPU backend's, for k = 1, 2, 3, 5, with
// MSM tables and without, on sparse, dense and all-zero vectors.
func TestCUDATailBatchMatchesSingles(t *testing.T) {
	sizes := []int{1, 100, 4097}
	if testing.Short() {
		sizes = sizes[:2]
	}
	ctx := context.Background()
	cpu := gpu.NewCPU(0, 0)
	for _, tables := range []bool{false, true} {
		opt := gpu.WithMSMTables(0)
		if tables {
			opt = gpu.WithMSMTableMinBases(1)
		}
		c := openOwn(t, opt)
		for _, size := range sizes {
			if tables && size > 100 && testing.Short() {
				continue
			}
			r := rand.New(rand.NewPCG(uint64(size), 21))
			key := newFixture(r, size, mixed, proofdata.HDivideByZ, true).key
			rg, err := c.Load(key)
			if err != nil {
				t.Fatal(err)
			}
			rc, _ := cpu.Load(key)
			for _, k := range []int{1, 2, 3, 5} {
				t.Run(fmt.Sprintf("tables=%v/n=%d/k=%d", tables, size, k), func(t *testing.T) {
					vecs := batchJobs(r, key, k)
					var sg, sc []*proofdata.Staged
					for _, v := range vecs {
						s, err := c.Transfer(ctx, rg, v)
						if err != nil {
							t.Fatal(err)
						}
						defer c.Free(s)
						sg = append(sg, s)
						s, _ = cpu.Transfer(ctx, rc, v)
						sc = append(sc, s)
					}
					got, errs := c.TailMSMG1Batch(ctx, sg)
					cpuBatch, cpuErrs := cpu.TailMSMG1Batch(ctx, sc)
					for j := range k {
						if errs[j] != nil || cpuErrs[j] != nil {
							t.Fatalf("job %d: cuda %v, cpu %v", j, errs[j], cpuErrs[j])
						}
						one, err := c.TailMSMG1(ctx, sg[j])
						if err != nil {
							t.Fatal(err)
						}
						want, err := cpu.TailMSMG1(ctx, sc[j])
						if err != nil {
							t.Fatal(err)
						}
						eqSums(t, fmt.Sprintf("job %d batch vs single", j), one, got[j])
						eqSums(t, fmt.Sprintf("job %d batch vs cpu", j), want, got[j])
						eqSums(t, fmt.Sprintf("job %d cpu batch vs cpu", j), want, cpuBatch[j])
					}
				})
			}
			rg.Close()
		}
		c.Close()
	}
}

// TestCUDATailBatchFailures: a batched run that fails (an allocation or a
// kernel, injected) is run again job by job, so every job still gets its
// right sums; a job that is not the backend's fails alone, naming why; and
// a batch of two circuits' jobs runs each circuit's as its own batch.
func TestCUDATailBatchFailures(t *testing.T) {
	c := openOwn(t, gpu.WithMSMTables(0))
	defer c.Close()
	h := standIn(t, c)
	ctx := context.Background()
	cpu := gpu.NewCPU(0, 0)
	r := rand.New(rand.NewPCG(22, 23))
	keys := []*proofdata.Key{newFixture(r, 100, mixed, proofdata.HDivideByZ, true).key, newFixture(r, 37, mixed, proofdata.HDivideByZ, true).key}
	var ss, want []*proofdata.Staged
	for i, key := range append(slices.Clone(keys), keys...) {
		rg, err := c.Load(key)
		if err != nil {
			t.Fatal(err)
		}
		defer rg.Close()
		rc, _ := cpu.Load(key)
		for _, v := range batchJobs(r, key, 2+i%2) {
			s, err := c.Transfer(ctx, rg, v)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Free(s)
			ss = append(ss, s)
			s, _ = cpu.Transfer(ctx, rc, v)
			want = append(want, s)
		}
	}
	check := func(what string, got []proofdata.G1Sums, errs []error) {
		t.Helper()
		for j := range ss {
			if errs[j] != nil {
				t.Fatalf("%s: job %d: %v", what, j, errs[j])
			}
			w, _ := cpu.TailMSMG1(ctx, want[j])
			eqSums(t, fmt.Sprintf("%s: job %d", what, j), w, got[j])
		}
	}
	got, errs := c.TailMSMG1Batch(ctx, ss)
	check("no failure", got, errs)
	for _, what := range []string{"cudaMalloc", "kernel"} {
		for _, nth := range []int64{1, 3, 7} {
			h.Fail(what, nth)
			got, errs := c.TailMSMG1Batch(ctx, ss)
			h.Fail(what, 0)
			check(fmt.Sprintf("%s #%d failed", what, nth), got, errs)
		}
	}
	foreign := &proofdata.Staged{Resident: ss[0].Resident, Host: ss[0].Host}
	_, errs = c.TailMSMG1Batch(ctx, []*proofdata.Staged{ss[0], foreign, ss[1]})
	if errs[0] != nil || errs[2] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "not staged") {
		t.Fatalf("a foreign job in a batch: errors %v", errs)
	}
}

// A stream with tail-msm batches of up to 4 on the CUDA backend, over two
// circuits (dense mulchain, sparse bits) whose jobs alternate: every proof
// verifies with gnark, and batches of more than one job did run.
func TestCUDATailBatchProofsVerify(t *testing.T) {
	cuda := openCUDA(t)
	cfg := provertest.Config(t.TempDir(), 2, 2)
	cfg.G2 = cuda
	provertest.ProveBatchedMix(t, cfg, cuda)
}

// BenchmarkCUDATailBatch times one batched tail (A, B₁ and K of k jobs
// over one key) against the same k jobs' tails one after another, for k =
// 1, 2, 4, 8, dense and sparse (about 3/5 significant) queries, and prints
// a line for each (medians of its own repeats: run it once, -benchtime 1x).
// ZKPIPE_CUDA_TAILBATCH_SIZES=16,20 (log2, the default) sets the sizes.
func BenchmarkCUDATailBatch(b *testing.B) {
	cuda := openCUDA(b)
	b.Logf("device: %s", cuda.Device())
	ctx := context.Background()
	r := rand.New(rand.NewPCG(31, 32))
	sizes := []int{16, 20}
	if v := os.Getenv("ZKPIPE_CUDA_TAILBATCH_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			lg, err := strconv.Atoi(f)
			if err != nil || lg < 1 || lg > 24 {
				b.Fatalf("ZKPIPE_CUDA_TAILBATCH_SIZES: %q", v)
			}
			sizes = append(sizes, lg)
		}
	}
	median := func(f func() error) time.Duration {
		if err := f(); err != nil { // warm-up
			b.Fatal(err)
		}
		var ts []time.Duration
		for range 5 {
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, time.Since(t0))
		}
		slices.Sort(ts)
		return ts[len(ts)/2]
	}
	for _, lg := range sizes {
		n := 1 << lg
		key := key254(proofdata.HDivideByZ, &bases254{Domain: fft.NewDomain(2), A: tileG1(n, false), B1: tileG1(n, false), K: tileG1(n, false)})
		res, err := cuda.Load(key)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []int{dense, mixed} {
			var ss []*proofdata.Staged
			for range 8 {
				v := &proofdata.Vectors{QA: classify(scalars(r, n, mode)), QB: classify(scalars(r, n, mode)), QK: classify(scalars(r, n, mode))}
				s, err := cuda.Transfer(ctx, res, v)
				if err != nil {
					b.Fatal(err)
				}
				ss = append(ss, s)
			}
			for _, k := range []int{1, 2, 4, 8} {
				single := median(func() error {
					for _, s := range ss[:k] {
						if _, err := cuda.TailMSMG1(ctx, s); err != nil {
							return err
						}
					}
					return nil
				})
				batch := median(func() error {
					_, errs := cuda.TailMSMG1Batch(ctx, ss[:k])
					return errors.Join(errs...)
				})
				fmt.Printf("tail A+B1+K 2^%d %s, %d jobs: one by one %.1f ms (%.2f ms a job), batched %.1f ms (%.2f ms a job): %.2f×\n",
					lg, map[int]string{dense: "dense", mixed: "sparse"}[mode], k, ms(single), ms(single)/float64(k), ms(batch), ms(batch)/float64(k), float64(single)/float64(batch))
			}
			for _, s := range ss {
				cuda.Free(s)
			}
		}
		res.Close()
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
