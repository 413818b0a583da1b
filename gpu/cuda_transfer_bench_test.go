//go:build unix

package gpu_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCUDATransfer stages one proof's vectors at 2^20 (a, b, c and
// three queries of mulchain's shape: every scalar significant) three ways:
// Classify into pageable memory then Transfer (through the bounce buffers,
// main's way), TransferClassify with B classified on the host (for a CPU
// B_G2), and TransferClassify of all three straight into the pinned
// buffers (--bg2-device cuda). It reports the CPU time of each per proof,
// beside the wall time; TransferClassify's ways twice, its queries' chunks
// classified by one goroutine a query (serial) and split among GOMAXPROCS
// (parts: compare -cpu 2,16 on the H200).
//
//	ZKPIPE_CUDA_LIB=… go test -run '^$' -bench CUDATransfer -benchtime 20x ./gpu
func BenchmarkCUDATransfer(b *testing.B) {
	openCUDA(b) // skips without a library
	lib := os.Getenv("ZKPIPE_CUDA_LIB")
	if lib == "" {
		lib, _ = filepath.Abs("cuda/libzkpipe_cuda.so")
	}
	// serial: one goroutine a query (the transfer before it split its
	// chunks); parts: GOMAXPROCS goroutines shared by the queries
	for _, c := range []struct {
		name    string
		workers int
	}{{"serial", 1}, {"parts", 0}} {
		b.Run(c.name, func(b *testing.B) {
			// no MSM tables: Load would build them, and only the transfer counts here
			cuda, err := gpu.OpenCUDA(lib, gpu.WithMSMTables(0), gpu.WithClassifyWorkers(c.workers))
			if err != nil {
				b.Fatal(err)
			}
			defer cuda.Close()
			benchTransfer(b, cuda, c.workers == 1)
		})
	}
}

// benchTransfer is BenchmarkCUDATransfer on one backend; main adds the
// classify+transfer way (no TransferClassify: its workers do not count).
func benchTransfer(b *testing.B, cuda *gpu.CUDA, main bool) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(3, 4))
	key := key254(proofdata.HDivideByZ, &bases254{Domain: domain(n, proofdata.HDivideByZ),
		A: tileG1(n, false), B1: tileG1(n, false), K: tileG1(n, false), Z: tileG1(n-1, false), B2: tileG2(n, false)})
	res, err := cuda.Load(key)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Close()
	w := proofdata.Scalars(scalars(r, n+2, dense))
	one := proofdata.One(curve.BN254)
	sel := make([]uint32, n)
	for j := range sel {
		sel[j] = uint32(j + 2)
	}
	abc := proofdata.Scalars(scalars(r, n, dense))
	ones, idx, vals := make([]uint64, n/64), make([]uint32, n), make([]proofdata.Scalar, n)
	qb := struct {
		ones []uint64
		idx  []uint32
		vals []proofdata.Scalar
	}{make([]uint64, n/64), make([]uint32, n), make([]proofdata.Scalar, n)}
	ways := []string{"transfer-classify-hostB", "transfer-classify"}
	if main {
		ways = append([]string{"classify+transfer"}, ways...)
	}
	for _, way := range ways {
		b.Run(way, func(b *testing.B) {
			cpu0 := processCPU()
			for range b.N {
				v := &proofdata.Vectors{A: abc, B: abc, C: abc}
				hostB := way != "transfer-classify"
				if hostB {
					proofdata.Classify(&v.QB, one, w, sel, qb.ones, qb.idx, qb.vals)
				}
				var s *proofdata.Staged
				var err error
				if way == "classify+transfer" {
					proofdata.Classify(&v.QA, one, w, sel, ones, idx, vals)
					proofdata.Classify(&v.QK, one, w, sel, ones, idx, vals) // same buffers: only the cost counts here
					s, err = cuda.Transfer(context.Background(), res, v)
				} else {
					s, err = cuda.TransferClassify(context.Background(), res, v, w, sel, sel, sel, hostB)
				}
				if err != nil {
					b.Fatal(err)
				}
				cuda.Free(s)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
