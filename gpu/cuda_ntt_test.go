package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// TestCUDANTTMatchesCPU compares h, as the CUDA backend computes it (the
// regs NTT from 2^3, the passes below), with the CPU backend's (gnark-crypto's fft) at every
// domain size 2^0 … 2^12 and 2^16, in both conventions: gnark's (inverse
// NTT, coset NTT, pointwise ÷ Z, inverse coset NTT: DIF with ω⁻¹ and DIT
// with ω, coset scalings between) and snarkjs's (odd coset of the 2n
// domain, no division, no last inverse).
func TestCUDANTTMatchesCPU(t *testing.T) {
	cuda := openCUDA(t)
	r := rand.New(rand.NewPCG(9, 10))
	logs := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16}
	for _, lg := range logs {
		for _, conv := range []proofdata.HConvention{proofdata.HDivideByZ, proofdata.HOddCoset} {
			t.Run(fmt.Sprintf("2^%d/conv=%d", lg, conv), func(t *testing.T) {
				computeHMatches(t, cuda, newNTTFixture(r, 1<<lg, conv))
			})
		}
	}
}

// newNTTFixture is a key and vectors of n elements for H alone: a, b, c
// dense and random over the whole domain, with 0 and r − 1 among them.
func newNTTFixture(r *rand.Rand, n int, conv proofdata.HConvention) fixture {
	f := newFixture(r, 1, mixed, conv, false) // small bases: H reads none of them
	b0 := *basesOf(f.key)
	b0.Domain = domain(n, conv)
	hl := n - 1
	if conv == proofdata.HOddCoset || n == 1 {
		hl = n
	}
	b0.Z = tileG1(hl, false)
	f.key = key254(conv, &b0)
	a, b, c := scalars(r, n, dense), scalars(r, n, dense), scalars(r, n, dense)
	a[0].SetZero()
	b[n-1].SetOne()
	b[n-1].Neg(&b[n-1])
	vecs := f.vecs
	f.vecs = func() *proofdata.Vectors {
		v := vecs()
		v.A, v.B, v.C = proofdata.Scalars(slices.Clone(a)), proofdata.Scalars(slices.Clone(b)), proofdata.Scalars(slices.Clone(c))
		return v
	}
	return f
}

// computeHMatches compares the CUDA backend's h with the CPU's.
func computeHMatches(t *testing.T, cuda *gpu.CUDA, f fixture) {
	t.Helper()
	ctx := context.Background()
	cpu := gpu.NewCPU(0, 0)
	hC, err := cpu.ComputeH(ctx, f.key, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.PutH(hC)
	rg, err := cuda.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	defer rg.Close()
	sg, err := cuda.Transfer(ctx, rg, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	defer cuda.Free(sg)
	hG, err := cuda.ComputeH(ctx, sg)
	if err != nil {
		t.Fatal(err)
	}
	sameH(t, frs(hC), hG, f.key.HLen())
}
