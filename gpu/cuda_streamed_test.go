package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// TestCUDAStreamedBasesMatchCPU: a key whose bases stay in pinned host
// memory (BasesOnHost), streamed to the device in pieces of 256 points,
// gives the CPU's batch sums, tails, B₂ and H on both curves, dense and
// sparse, over queries of one piece, of several and of a short last one;
// it holds none of its bases on the device (ResidentBytes is the
// domain's tables alone) and says so as PinnedKeyBytes.
func TestCUDAStreamedBasesMatchCPU(t *testing.T) {
	c := openOwn(t, gpu.WithBases(gpu.BasesOnHost), gpu.WithStreamPiece(256))
	defer c.Close()
	on := openOwn(t, gpu.WithBases(gpu.BasesOnDevice), gpu.WithMSMTables(0))
	defer on.Close()
	r := rand.New(rand.NewPCG(31, 32))
	sizes := []int{200, 1000, 1100}
	if testing.Short() {
		sizes = []int{1100}
	}
	for _, size := range sizes {
		for _, mode := range []int{mixed, dense} {
			f := newFixture(r, size, mode, proofdata.HDivideByZ, true)
			if pinned, res, dev := c.PinnedKeyBytes(f.key), c.ResidentBytes(f.key), on.ResidentBytes(f.key); pinned == 0 || res >= dev || on.PinnedKeyBytes(f.key) != 0 {
				t.Fatalf("n=%d: %d pinned and %d device bytes streamed, %d on the device: the bases are not where they were put", size, pinned, res, dev)
			}
			t.Run(fmt.Sprintf("bn254/n=%d/mode=%d", size, mode), func(t *testing.T) { compare(t, c, f, true) })
			t.Run(fmt.Sprintf("bls12-381/n=%d/mode=%d", size, mode), func(t *testing.T) {
				compare(t, c, newFixtureBLS(r, size, mode, proofdata.HDivideByZ, true), mode == mixed)
			})
		}
	}
}

// TestCUDAStreamedBasesWhereTheyDoNotFit: BasesAuto keeps a key's bases on
// a device where they fit beside a job, and streams them from the host on
// one too small for that, whose whole job then fits; TailMSMG1 and MSMG2
// before batch-addition are refused, not answered with nothing.
func TestCUDAStreamedBasesWhereTheyDoNotFit(t *testing.T) {
	f := newFixture(rand.New(rand.NewPCG(33, 34)), 3000, mixed, proofdata.HDivideByZ, false)
	roomy := openOwn(t, gpu.WithStreamPiece(256), gpu.WithMSMTables(0))
	h := standIn(t, roomy)
	resident, job := roomy.ResidentBytes(f.key), roomy.JobBytes(f.key, 0)
	roomy.Close()
	if resident == 0 || job == 0 {
		t.Fatalf("resident %d, job %d", resident, job)
	}
	h.SetMemory(uint64(resident + job/2)) // the key, and half a job
	defer h.SetMemory(0)
	c := openOwn(t, gpu.WithStreamPiece(256), gpu.WithMSMTables(0))
	defer c.Close()
	if c.PinnedKeyBytes(f.key) == 0 {
		t.Fatalf("a key and half a job's room: the bases stay on the device")
	}
	if got := c.ResidentBytes(f.key) + c.JobBytes(f.key, 0); got > resident+job/2 {
		t.Errorf("streamed, the key and a job take %d device bytes, more than the %d there are", got, resident+job/2)
	}
	res, err := c.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	s, err := c.Transfer(context.Background(), res, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(s)
	if _, err := c.TailMSMG1(context.Background(), s); err == nil {
		t.Error("the tails of streamed bases before batch-addition: no error")
	}
	if _, err := c.MSMG2(context.Background(), s); err == nil {
		t.Error("B₂'s tail of streamed bases before batch-addition: no error")
	}
}
