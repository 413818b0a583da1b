//go:build unix

package engine_test

import (
	"context"
	"fmt"
	"runtime/metrics"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Minflt)
}

// heapAllocs is the bytes the process has allocated on the Go heap so far.
func heapAllocs() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// faultCount adds the minor faults of each call it wraps to its part, and
// the heap bytes it allocated to the part's "-alloc" twin.
type faultCount map[string]int64

func (f faultCount) around(part string, call func()) {
	before, alloc := minorFaults(), heapAllocs()
	call()
	f[part] += minorFaults() - before
	f[part+allocSuffix] += heapAllocs() - alloc
}

const allocSuffix = "-alloc"

type faultingSource struct {
	stages.Source
	f faultCount
}

func (s faultingSource) Parse(ctx context.Context, j *stages.Job) (err error) {
	s.f.around("parse", func() { err = s.Source.Parse(ctx, j) })
	return err
}

func (s faultingSource) Synthesize(ctx context.Context, j *stages.Job) (err error) {
	s.f.around("solve", func() { err = s.Source.Synthesize(ctx, j) })
	return err
}

type faultingBackend struct {
	*gpu.CPU
	f faultCount
}

func (b faultingBackend) MSMH(ctx context.Context, s *proofdata.Staged) (h proofdata.Point, err error) {
	b.f.around("msm-h", func() { h, err = b.CPU.MSMH(ctx, s) })
	return h, err
}

func (b faultingBackend) TailMSMG1(ctx context.Context, s *proofdata.Staged) (t proofdata.G1Sums, err error) {
	b.f.around("tail-msm", func() { t, err = b.CPU.TailMSMG1(ctx, s) })
	return t, err
}

func (b faultingBackend) MSMG2(ctx context.Context, s *proofdata.Staged) (t proofdata.Point, err error) {
	b.f.around("b-g2", func() { t, err = b.CPU.MSMG2(ctx, s) })
	return t, err
}

// BenchmarkFaultsPerProof proves mulchain proofs one at a time through one
// engine on the CPU backend and reports the minor page faults of the first
// proof and the median and mean of the rest, in all and per part (parse,
// the solve, NTT+MSM_H, the tail MSMs, B_G2's MSM, and the rest:
// classification, batch-addition, assembly, the runtime): what pooling
// leaves to fault in again every proof. The faults of the rest are
// bimodal (a proof whose MSMs follow the scavenger's release faults
// thousands of pages, the next one none), so the mean says more than the
// median. MiB-a-proof is the Go heap a steady proof allocates, per part:
// garbage that the collector frees and the scavenger returns to the OS
// (notes/cpu-faults.md), the figure a fix must bring down.
//
//	go test -run '^$' -bench FaultsPerProof -benchtime 1x ./engine
func BenchmarkFaultsPerProof(b *testing.B) {
	for _, id := range []curve.ID{curve.BN254, curve.BLS12_381} {
		for _, logn := range []int{14, 16} {
			b.Run(fmt.Sprintf("%s/mulchain-2^%d", id, logn), func(b *testing.B) {
				keys := provertest.SetupOn(b, id, "mulchain", 1<<logn)
				for range b.N {
					benchFaults(b, keys)
				}
			})
		}
	}
}

func benchFaults(b *testing.B, keys *provertest.Keys) {
	const proofs = 8
	f := faultCount{}
	cfg := provertest.Config(b.TempDir(), 1, 1)
	backend := faultingBackend{CPU: gpu.NewCPU(2, 2), f: f} // provertest.Config's CPU
	cfg.Backend, cfg.G2 = backend, backend
	circuit := keys.Circuit(b, "chain")
	circuit.Source = faultingSource{Source: circuit.Source, f: f}
	eng, err := engine.NewCore(cfg, circuit)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	parts := []string{"parse", "solve", "msm-h", "tail-msm", "b-g2", "rest"}
	per := make([]map[string]int64, proofs)
	for i := range proofs {
		clear(f)
		before, alloc := minorFaults(), heapAllocs()
		prove(b, eng, &stages.Job{Request: stream.Request{ID: fmt.Sprint("j", i), Generate: &stream.Generate{Seed: int64(i)}}})
		total, allocs := minorFaults()-before, heapAllocs()-alloc
		per[i] = map[string]int64{"all": total, "all" + allocSuffix: allocs}
		rest, restAlloc := total, allocs
		for p, n := range f {
			per[i][p] = n
			if len(p) > len(allocSuffix) && p[len(p)-len(allocSuffix):] == allocSuffix {
				restAlloc -= n
			} else {
				rest -= n
			}
		}
		per[i]["rest"], per[i]["rest"+allocSuffix] = rest, restAlloc
	}
	for _, p := range append([]string{"all"}, parts...) {
		b.ReportMetric(float64(per[0][p]), p+"-first-faults")
		b.ReportMetric(float64(medianOf(per[1:], p)), p+"-median-faults")
		b.ReportMetric(meanOf(per[1:], p), p+"-mean-faults")
		b.ReportMetric(meanOf(per[1:], p+allocSuffix)/(1<<20), p+"-MiB-a-proof")
	}
	first := float64(per[0]["all"])
	b.ReportMetric(100*float64(medianOf(per[1:], "all"))/first, "steady-%-of-first")
	b.ReportMetric(100*meanOf(per[1:], "all")/first, "steady-mean-%-of-first")
}

func medianOf(per []map[string]int64, part string) int64 {
	var all []int64
	for _, m := range per {
		all = append(all, m[part])
	}
	slices.Sort(all)
	return all[len(all)/2]
}

func meanOf(per []map[string]int64, part string) float64 {
	var sum int64
	for _, m := range per {
		sum += m[part]
	}
	return float64(sum) / float64(len(per))
}

// prove runs one job through eng and fails b unless it is proven.
func prove(b *testing.B, eng *engine.Core, j *stages.Job) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := make(chan *stages.Job, 1)
	src <- j
	close(src)
	var res []engine.CoreResult
	if err := eng.Run(ctx, eng.Pipeline(nil), src, func(r engine.CoreResult) { res = append(res, r) }); err != nil {
		b.Fatal(err)
	}
	if len(res) != 1 || res[0].Err != nil {
		b.Fatalf("job %s: %v", j.ID, res)
	}
}
