package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// These tests run over the host stand-in, which counts the kernel calls
// (MSM, batch-addition, H) running at once and refuses a second call on a
// stream that is in one; each wait for a stream sleeps a "device time" so
// that calls on different streams overlap long enough to be counted.

const deviceTimeUS = 20_000 // per wait for a stream: long against a goroutine's start

// withDeviceTime sets the stand-in's device time for the test and resets
// its peak of calls at once.
func withDeviceTime(t *testing.T, h *gpu.HostStandIn) {
	t.Helper()
	h.SetDelay(deviceTimeUS)
	t.Cleanup(func() { h.SetDelay(0) })
	h.CallsPeak(1)
}

// expected is what the CPU backend computes for one proof of f.
type expected struct {
	h    proofdata.Point
	tail proofdata.G1Sums
	g2   proofdata.Point
}

func expect(t *testing.T, f fixture) expected {
	t.Helper()
	ctx := context.Background()
	cpu := gpu.NewCPU(0, 0)
	r, err := cpu.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := cpu.Transfer(ctx, r, f.vecs())
	var x expected
	if x.h, err = cpu.MSMH(ctx, s); err != nil {
		t.Fatal(err)
	}
	if x.tail, err = cpu.TailMSMG1(ctx, s); err != nil {
		t.Fatal(err)
	}
	if x.g2, err = cpu.MSMG2(ctx, s); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestCUDAComputeStreamsRunAtOnce gives k compute streams four jobs' H and
// B₂ MSMs from four goroutines: exactly k kernel calls run at once (never
// more: each stream serves one; and k: the streams are used), and every
// result is the CPU's.
func TestCUDAComputeStreamsRunAtOnce(t *testing.T) {
	f := newFixture(rand.New(rand.NewPCG(11, 1)), 200, mixed, proofdata.HDivideByZ, true)
	want := expect(t, f)
	ctx := context.Background()
	for _, k := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("streams=%d", k), func(t *testing.T) {
			c := openOwn(t, gpu.WithComputeStreams(k))
			defer c.Close()
			h := standIn(t, c)
			if c.ComputeStreams() != k {
				t.Fatalf("ComputeStreams() = %d, want %d", c.ComputeStreams(), k)
			}
			res, err := c.Load(f.key)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			withDeviceTime(t, h)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					s, err := c.Transfer(ctx, res, f.vecs())
					if err != nil {
						t.Error(err)
						return
					}
					defer c.Free(s)
					hs, err := c.MSMH(ctx, s)
					if err != nil {
						t.Error(err)
						return
					}
					g2, err := c.MSMG2(ctx, s)
					if err != nil {
						t.Error(err)
						return
					}
					if !jac1(hs).Equal(jac1(want.h)) || !jac2(g2).Equal(jac2(want.g2)) {
						t.Error("an MSM on concurrent streams differs from the CPU's")
					}
				})
			}
			wg.Wait()
			if peak := h.CallsPeak(0); int(peak) != k {
				t.Errorf("%d kernel calls ran at once on %d compute streams, want %d", peak, k, k)
			}
		})
	}
}

// TestCUDATailMSMsSpreadOverStreams runs one job's tail: with the split on,
// its A, B₁ and K MSMs take min(3, streams) streams at once; with it off,
// or one stream, they run in turn. The sums are the CPU's either way.
func TestCUDATailMSMsSpreadOverStreams(t *testing.T) {
	f := newFixture(rand.New(rand.NewPCG(11, 2)), 300, mixed, proofdata.HDivideByZ, true)
	want := expect(t, f)
	ctx := context.Background()
	for _, c := range []struct {
		streams int
		split   bool
		atOnce  int32
	}{{1, true, 1}, {2, true, 2}, {3, true, 3}, {4, true, 3}, {3, false, 1}} {
		t.Run(fmt.Sprintf("streams=%d/split=%v", c.streams, c.split), func(t *testing.T) {
			dev := openOwn(t, gpu.WithComputeStreams(c.streams), gpu.WithTailSplit(c.split))
			t.Cleanup(func() { dev.Close() }) // after stageFixture's frees
			h := standIn(t, dev)
			s := stageFixture(t, dev, f)
			withDeviceTime(t, h)
			got, err := dev.TailMSMG1(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			eqSums(t, "tail-msm", want.tail, got)
			if peak := h.CallsPeak(0); peak != c.atOnce {
				t.Errorf("%d tail MSMs ran at once, want %d", peak, c.atOnce)
			}
		})
	}
}

// TestCUDATailSplitDeviceMemory: the MSMs of a split tail hold their scratch
// at once, more than one MSM's (so JobBytes without the overlap would be
// short), and JobBytes, which counts the overlap, still bounds the peak.
func TestCUDATailSplitDeviceMemory(t *testing.T) {
	f := newFixture(rand.New(rand.NewPCG(11, 3)), 3000, dense, proofdata.HDivideByZ, false)
	ctx := context.Background()
	serial := openOwn(t, gpu.WithComputeStreams(3), gpu.WithTailSplit(false))
	oneAtATime := serial.JobBytes(f.key, 0)
	serial.Close()

	c := openOwn(t, gpu.WithComputeStreams(3), gpu.WithTailSplit(true))
	defer c.Close()
	h := standIn(t, c)
	job := c.JobBytes(f.key, 0)
	if job <= oneAtATime {
		t.Fatalf("JobBytes with the split %d, without %d: the overlap is not counted", job, oneAtATime)
	}
	res, err := c.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	h.Peak(1) // a new period from the bytes held now
	held := h.Allocated()
	s, err := c.Transfer(ctx, res, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	withDeviceTime(t, h)
	_, err = c.TailMSMG1(ctx, s)
	c.Free(s)
	if err != nil {
		t.Fatal(err)
	}
	peak := int64(h.Peak(0) - held)
	t.Logf("split tail: device peak %d bytes; JobBytes %d with the overlap, %d without", peak, job, oneAtATime)
	if peak <= oneAtATime || peak > job {
		t.Errorf("peak %d: want more than one MSM at a time holds (%d) and at most JobBytes (%d)", peak, oneAtATime, job)
	}
}

// TestCUDATailsOneAtATimeWhereTheyDoNotFitAtOnce: on a device too small
// for a job's tail MSMs at once beside its key (a 2^27 circuit on the
// H200: 46 GiB of bases, 48 GiB of scratch an MSM), the split tail runs
// its MSMs one at a time, JobBytes says the one-at-a-time figure, and the
// sums are the CPU's; with room for the overlap it still splits.
func TestCUDATailsOneAtATimeWhereTheyDoNotFitAtOnce(t *testing.T) {
	f := newFixture(rand.New(rand.NewPCG(11, 4)), 3000, dense, proofdata.HDivideByZ, false)
	want := expect(t, f)
	ctx := context.Background()
	serial := openOwn(t, gpu.WithComputeStreams(3), gpu.WithTailSplit(false))
	h := standIn(t, serial)
	oneAtATime, resident := serial.JobBytes(f.key, 0), serial.ResidentBytes(f.key)
	serial.Close()
	for _, dev := range []struct {
		name   string
		total  int64
		atOnce int32
	}{{"room for one", resident + oneAtATime, 1}, {"room for three", 0, 3}} {
		t.Run(dev.name, func(t *testing.T) {
			h.SetMemory(uint64(dev.total)) // read as the backend opens
			defer h.SetMemory(0)
			c := openOwn(t, gpu.WithComputeStreams(3), gpu.WithTailSplit(true))
			t.Cleanup(func() { c.Close() })
			job := c.JobBytes(f.key, 0)
			if dev.atOnce == 1 && job != oneAtATime {
				t.Errorf("JobBytes %d on a device of %d bytes, want the one-at-a-time %d", job, dev.total, oneAtATime)
			}
			if dev.atOnce > 1 && job <= oneAtATime {
				t.Errorf("JobBytes %d with room to spare, want more than one-at-a-time's %d", job, oneAtATime)
			}
			s := stageFixture(t, c, f)
			withDeviceTime(t, h)
			got, err := c.TailMSMG1(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			eqSums(t, "tail-msm", want.tail, got)
			if peak := h.CallsPeak(0); peak != dev.atOnce {
				t.Errorf("%d tail MSMs ran at once, want %d", peak, dev.atOnce)
			}
		})
	}
}

// TestCUDAComputeStreamsRange: OpenCUDA refuses 0 and more than
// MaxComputeStreams compute streams.
func TestCUDAComputeStreamsRange(t *testing.T) {
	for _, n := range []int{0, -1, gpu.MaxComputeStreams + 1} {
		if c, err := gpu.OpenCUDA(cudaLib(t), gpu.WithComputeStreams(n)); err == nil {
			c.Close()
			t.Errorf("OpenCUDA with %d compute streams succeeded", n)
		}
	}
}

// TestCUDAClassifyWorkersRange: OpenCUDA refuses a negative count of
// classifying goroutines, naming it, before it looks for a library.
func TestCUDAClassifyWorkersRange(t *testing.T) {
	c, err := gpu.OpenCUDA("/nonexistent/libzkpipe_cuda.so", gpu.WithClassifyWorkers(-1))
	if err == nil {
		c.Close()
		t.Fatal("OpenCUDA with -1 classify workers succeeded")
	}
	if !strings.Contains(err.Error(), "-1 classify workers") {
		t.Fatalf("err = %v, want it to name the classify workers", err)
	}
}

// BenchmarkCUDAMeasureStreams prints the device time a proof's GPU work
// takes when several proofs' work is offered at once (4 goroutines, as four
// device-stage workers), for 1, 2 and 3 compute streams and with the tail
// split off (run it once, -benchtime 1x), at 2^20 points or
// ZKPIPE_CUDA_STREAMS_LOG2, and not when ZKPIPE_CUDA_MEASURE asks for
// something else (msm: the msmgrid step).
func BenchmarkCUDAMeasureStreams(b *testing.B) {
	if m := os.Getenv("ZKPIPE_CUDA_MEASURE"); m != "" && m != "streams" {
		b.Skipf("ZKPIPE_CUDA_MEASURE=%s", m)
	}
	lg := 20
	if v := os.Getenv("ZKPIPE_CUDA_STREAMS_LOG2"); v != "" {
		var err error
		if lg, err = strconv.Atoi(v); err != nil || lg < 2 || lg > 24 {
			b.Fatalf("ZKPIPE_CUDA_STREAMS_LOG2=%q", v)
		}
	}
	n := 1 << lg
	r := rand.New(rand.NewPCG(11, 4))
	k := key254(proofdata.HDivideByZ, &bases254{Domain: fft.NewDomain(uint64(n)),
		A: tileG1(n, false), B1: tileG1(n, false), K: tileG1(n, false), Z: tileG1(n-1, false), B2: tileG2(n, false)})
	va, vb, vc := scalars(r, n, dense), scalars(r, n, dense), scalars(r, n, dense)
	qa, qb, qk := classify(scalars(r, n, dense)), classify(scalars(r, n, dense)), classify(scalars(r, n, dense))
	vecs := func() *proofdata.Vectors {
		return &proofdata.Vectors{A: proofdata.Scalars(slices.Clone(va)), B: proofdata.Scalars(slices.Clone(vb)), C: proofdata.Scalars(slices.Clone(vc)), QA: qa, QB: qb, QK: qk}
	}
	const proofs, workers = 12, 4
	ctx := context.Background()
	for _, cfg := range []struct {
		streams int
		split   bool
	}{{1, false}, {2, true}, {3, true}, {3, false}} {
		dev, err := gpu.OpenCUDA(cudaLib(b), gpu.WithComputeStreams(cfg.streams), gpu.WithTailSplit(cfg.split))
		if err != nil {
			b.Skipf("no CUDA backend: %v", err)
		}
		res, err := dev.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		// Staged before the clock starts: this times the kernels, not the uploads.
		staged := make(chan *proofdata.Staged, proofs)
		for range proofs {
			s, err := dev.Transfer(ctx, res, vecs())
			if err != nil {
				b.Fatal(err)
			}
			staged <- s
		}
		close(staged)
		t0 := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for s := range staged {
					_, err := dev.MSMH(ctx, s)
					if err == nil {
						_, err = dev.TailMSMG1(ctx, s)
					}
					if err == nil {
						_, err = dev.MSMG2(ctx, s)
					}
					dev.Free(s)
					if err != nil {
						b.Error(err)
					}
				}
			})
		}
		wg.Wait()
		per := time.Since(t0) / proofs
		fmt.Printf("2^%d, %d proofs from %d workers, %d compute streams, tail split %v: %.1f ms of GPU work a proof (H, A/B1/K tails, B2 G2)\n",
			lg, proofs, workers, cfg.streams, cfg.split, float64(per.Microseconds())/1000)
		res.Close()
		if err := dev.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCUDAHForksOverFreeStreams: H alone on a backend of k streams takes
// the free ones for b's and c's NTTs (all k busy at once, at most 3), and
// h's MSM is the CPU's.
func TestCUDAHForksOverFreeStreams(t *testing.T) {
	f := newFixture(rand.New(rand.NewPCG(11, 5)), 300, mixed, proofdata.HDivideByZ, true)
	want := expect(t, f)
	ctx := context.Background()
	for _, k := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("streams=%d", k), func(t *testing.T) {
			dev := openOwn(t, gpu.WithComputeStreams(k))
			t.Cleanup(func() { dev.Close() }) // after stageFixture's frees
			h := standIn(t, dev)
			s := stageFixture(t, dev, f)
			withDeviceTime(t, h)
			got, err := dev.MSMH(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if !jac1(got).Equal(jac1(want.h)) {
				t.Error("msm-h with forked NTTs differs from the CPU's")
			}
			if peak, atOnce := h.CallsPeak(0), min(k, 3); int(peak) != atOnce {
				t.Errorf("H took %d streams at once, want %d", peak, atOnce)
			}
		})
	}
}

// stageFixture loads f's key on dev and transfers its vectors; both are
// freed when the test ends.
func stageFixture(t *testing.T, dev *gpu.CUDA, f fixture) *proofdata.Staged {
	t.Helper()
	res, err := dev.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close() })
	s, err := dev.Transfer(context.Background(), res, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Free(s) })
	return s
}
