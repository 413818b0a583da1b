package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// The CUDA library picks its NTT kernels at zk_init by ZKPIPE_NTT (regs, the
// default; passes; radix2). libc reads the environment the process started
// with, so each variant runs in a child process of this test binary.
const nttChild = "ZKPIPE_NTT_CHILD"

// TestCUDANTTVariants runs TestCUDANTTMatchesCPU once per NTT variant, each
// in a child process with ZKPIPE_NTT set (and, for regs, its knobs that
// change the arithmetic or the copies: ZKPIPE_NTT_LAZY=0, the eager
// reduction; ZKPIPE_NTT_VARIANT=0, the looped copy-in; ZKPIPE_NTT_LANES=1,
// groups across lanes, in a pass of 2^16 with the default blocks and of
// 2^11 and 2^12 with blocks of 256), and checks that an unknown variant is
// refused by name.
func TestCUDANTTVariants(t *testing.T) {
	if os.Getenv(nttChild) != "" {
		t.Skip("in a child")
	}
	openCUDA(t) // skips without a library
	for _, v := range []struct {
		name, ntt string
		env       []string
	}{
		{"regs", "regs", nil},
		{"regs-eager", "regs", []string{"ZKPIPE_NTT_LAZY=0"}},
		{"regs-variant0", "regs", []string{"ZKPIPE_NTT_VARIANT=0"}},
		{"regs-lanes", "regs", []string{"ZKPIPE_NTT_LANES=1"}},
		{"regs-lanes-256", "regs", []string{"ZKPIPE_NTT_LANES=1", "ZKPIPE_NTT_BLOCK=256"}},
		{"passes", "passes", nil},
		{"radix2", "radix2", nil},
	} {
		t.Run(v.name, func(t *testing.T) {
			out := runNTTChild(t, v.ntt, "^TestCUDANTTMatchesCPU$", v.env...)
			if !strings.Contains(out, "--- PASS: TestCUDANTTMatchesCPU") {
				t.Fatalf("ZKPIPE_NTT=%s %v: TestCUDANTTMatchesCPU did not pass:\n%s", v.ntt, v.env, out)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		out := runNTTChild(t, "bogus", "^TestCUDANTTUnknownVariant$")
		if !strings.Contains(out, "--- PASS: TestCUDANTTUnknownVariant") {
			t.Fatalf("ZKPIPE_NTT=bogus: TestCUDANTTUnknownVariant did not pass:\n%s", out)
		}
	})
}

func runNTTChild(t *testing.T, variant, run string, env ...string) string {
	t.Helper()
	args := []string{"-test.run", run, "-test.count", "1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "ZKPIPE_NTT="+variant, nttChild+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ZKPIPE_NTT=%s: %v\n%s", variant, err, out)
	}
	return string(out)
}

// TestCUDANTTMatchesCPU compares h, as the CUDA backend computes it with the
// NTT variant in force, with the CPU backend's (gnark-crypto's fft) at every
// domain size 2^0 … 2^12 and 2^16, in both conventions: gnark's (inverse
// NTT, coset NTT, pointwise ÷ Z, inverse coset NTT: DIF with ω⁻¹ and DIT
// with ω, coset scalings between) and snarkjs's (odd coset of the 2n
// domain, no division, no last inverse).
func TestCUDANTTMatchesCPU(t *testing.T) {
	cuda := openCUDA(t)
	want := os.Getenv("ZKPIPE_NTT")
	if want == "" {
		want = "regs"
	}
	if !strings.Contains(cuda.Device(), "ntt "+want) {
		t.Fatalf("device %q: not running the %s NTT", cuda.Device(), want)
	}
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
	f.key.Domain = domain(n, conv)
	hl := n - 1
	if conv == proofdata.HOddCoset || n == 1 {
		hl = n
	}
	f.key.Z = tileG1(hl, false)
	a, b, c := scalars(r, n, dense), scalars(r, n, dense), scalars(r, n, dense)
	a[0].SetZero()
	b[n-1].SetOne()
	b[n-1].Neg(&b[n-1])
	vecs := f.vecs
	f.vecs = func() *proofdata.Vectors {
		v := vecs()
		v.A, v.B, v.C = slices.Clone(a), slices.Clone(b), slices.Clone(c)
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
	sameH(t, hC, hG, f.key.HLen())
}

// TestCUDANTTUnknownVariant: in a child with ZKPIPE_NTT=bogus, opening the
// library fails and says which value and which choices.
func TestCUDANTTUnknownVariant(t *testing.T) {
	if os.Getenv(nttChild) == "" || os.Getenv("ZKPIPE_NTT") != "bogus" {
		t.Skip("runs as TestCUDANTTVariants's child")
	}
	path := os.Getenv("ZKPIPE_CUDA_LIB")
	if path == "" {
		path, _ = filepath.Abs("cuda/libzkpipe_cuda.so") // as openCUDA
	}
	c, err := gpu.OpenCUDA(path)
	if err == nil {
		c.Close()
		t.Fatal("OpenCUDA with ZKPIPE_NTT=bogus succeeded")
	}
	if !strings.Contains(err.Error(), "ZKPIPE_NTT=bogus") || !strings.Contains(err.Error(), "regs") {
		t.Fatalf("error does not name the value and the choices: %v", err)
	}
}
