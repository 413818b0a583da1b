package stages_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// BenchmarkStreamVsGnark proves the same 8 witnesses with gnark's
// groth16.Prove one after another and through zkpipe's stream, and reports
// proofs/s of each and their ratio (zkpipe/gnark) from the same run.
//
//	go test -bench StreamVsGnark -benchtime 1x ./stages
func BenchmarkStreamVsGnark(b *testing.B) {
	const proofs = 8
	for _, name := range []string{"mulchain", "bits"} {
		b.Run(name, func(b *testing.B) {
			keys := provertest.Setup(b, name, 1<<14)
			for range b.N {
				start := time.Now()
				for i := range proofs {
					w, err := keys.Builtin.Witness(keys.N, int64(i))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := groth16.Prove(keys.CCS, keys.PK, w); err != nil {
						b.Fatal(err)
					}
				}
				gnarkRate := proofs / time.Since(start).Seconds()

				cfg := provertest.Config(b.TempDir(), 1, 2)
				cpu := gpu.NewCPU(0, 0)
				cfg.Backend, cfg.G2 = cpu, cpu
				var jobs []*stages.Job
				for i := range proofs {
					jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprint(i), Generate: &stream.Generate{Seed: int64(i)}}})
				}
				start = time.Now()
				res := provertest.Run(b, cfg, []*stages.Circuit{keys.Circuit(b, name)}, jobs, 10*time.Minute)
				rate := proofs / time.Since(start).Seconds()
				for _, r := range res {
					if r.Error != "" {
						b.Fatal(r.Error)
					}
				}
				b.ReportMetric(gnarkRate, "gnark-proofs/s")
				b.ReportMetric(rate, "zkpipe-proofs/s")
				b.ReportMetric(rate/gnarkRate, "ratio")
			}
		})
	}
}
