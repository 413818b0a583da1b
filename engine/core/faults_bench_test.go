//go:build unix

package core_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/engine/core"
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

// faultCount adds the minor faults of each call it wraps to its part.
type faultCount map[string]int64

func (f faultCount) around(part string, call func()) {
	before := minorFaults()
	call()
	f[part] += minorFaults() - before
}

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
// proof and the median of the rest, in all and per part (parse, the solve,
// NTT+MSM_H, the tail MSMs, B_G2's MSM, and the rest: classification,
// batch-addition, assembly, the runtime): what pooling leaves to fault in
// again every proof.
//
//	go test -run '^$' -bench FaultsPerProof -benchtime 1x ./engine/core
func BenchmarkFaultsPerProof(b *testing.B) {
	for _, logn := range []int{14, 16} {
		b.Run(fmt.Sprint("mulchain-2^", logn), func(b *testing.B) {
			keys := provertest.Setup(b, "mulchain", 1<<logn)
			for range b.N {
				const proofs = 8
				f := faultCount{}
				cfg := provertest.Config(b.TempDir(), 1, 1)
				cfg.Backend = faultingBackend{CPU: gpu.NewCPU(2, 2), f: f} // provertest.Config's CPU
				circuit := keys.Circuit(b, "chain")
				circuit.Source = faultingSource{Source: circuit.Source, f: f}
				eng, err := core.New(cfg, circuit)
				if err != nil {
					b.Fatal(err)
				}
				parts := []string{"parse", "solve", "msm-h", "tail-msm", "b-g2", "rest"}
				per := make([]map[string]int64, proofs)
				for i := range proofs {
					clear(f)
					before := minorFaults()
					prove(b, eng, &stages.Job{Request: stream.Request{ID: fmt.Sprint("j", i), Generate: &stream.Generate{Seed: int64(i)}}})
					total := minorFaults() - before
					per[i] = map[string]int64{"all": total}
					rest := total
					for p, n := range f {
						per[i][p] = n
						rest -= n
					}
					per[i]["rest"] = rest
				}
				eng.Close()
				for _, p := range append([]string{"all"}, parts...) {
					var rest []int64
					for _, m := range per[1:] {
						rest = append(rest, m[p])
					}
					slices.Sort(rest)
					b.ReportMetric(float64(per[0][p]), p+"-first-faults")
					b.ReportMetric(float64(rest[len(rest)/2]), p+"-median-faults")
				}
				b.ReportMetric(100*float64(median(per[1:]))/float64(per[0]["all"]), "steady-%-of-first")
			}
		})
	}
}

func median(per []map[string]int64) int64 {
	var all []int64
	for _, m := range per {
		all = append(all, m["all"])
	}
	slices.Sort(all)
	return all[len(all)/2]
}

// prove runs one job through eng and fails b unless it is proven.
func prove(b *testing.B, eng *core.Prover, j *stages.Job) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := make(chan *stages.Job, 1)
	src <- j
	close(src)
	var res []core.Result
	if err := eng.Run(ctx, eng.Pipeline(), src, func(r core.Result) { res = append(res, r) }); err != nil {
		b.Fatal(err)
	}
	if len(res) != 1 || res[0].Err != nil {
		b.Fatalf("job %s: %v", j.ID, res)
	}
}
