package gpu_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// frOf is a curve's Fr element as the fixed-base tests build them.
type frOf[S any] interface {
	*S
	SetBigInt(*big.Int) *S
	BigInt(*big.Int) *big.Int
}

// fixedBaseScalars: the edges of signed windows and of Fr (0, 1, small,
// around 2^(c·k) for the windows tested, (r ± 1)/2, r − 2, r − 1, 2^253)
// and random ones, zeros among them at several places, n in all.
func fixedBaseScalars[S any, PS frOf[S]](r *big.Int, n int, rng *rand.Rand) []S {
	var vals []*big.Int
	for _, v := range []int64{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 0xffff, 0x10000, 0} {
		vals = append(vals, big.NewInt(v))
	}
	one := big.NewInt(1)
	for _, e := range []uint{32, 40, 64, 128, 200, 240, 248, 253} {
		p := new(big.Int).Lsh(one, e)
		vals = append(vals, p, new(big.Int).Sub(p, one), new(big.Int).Add(p, one))
	}
	half := new(big.Int).Rsh(r, 1)
	vals = append(vals, half, new(big.Int).Add(half, one), new(big.Int).Sub(r, big.NewInt(2)), new(big.Int).Sub(r, one), big.NewInt(0))
	for len(vals) < n {
		b := make([]byte, 40)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		vals = append(vals, new(big.Int).Mod(new(big.Int).SetBytes(b), r))
	}
	out := make([]S, n)
	for i := range out {
		PS(&out[i]).SetBigInt(vals[i])
	}
	return out
}

// checkFixedBase runs mul over scalars at the given window bits and holds
// each product to ref (gnark-crypto's ScalarMultiplication).
func checkFixedBase[P comparable, S any, PS frOf[S]](t *testing.T, set func(int), base P, scalars []S,
	mul func(out []P, base *P, s []S) error, ref func(base *P, k *big.Int) P) {
	t.Helper()
	want := make([]P, len(scalars))
	var k big.Int
	for i := range scalars {
		PS(&scalars[i]).BigInt(&k)
		want[i] = ref(&base, &k)
	}
	for _, c := range []int{0, 5, 8} {
		t.Run(fmt.Sprintf("c=%d", c), func(t *testing.T) {
			set(c)
			defer set(0)
			got := make([]P, len(scalars))
			if err := mul(got, &base, scalars); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range got {
				if got[i] != want[i] {
					if bad++; bad <= 3 {
						PS(&scalars[i]).BigInt(&k)
						t.Errorf("scalar %d (%s): got %v, want %v", i, k.String(), got[i], want[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d products wrong", bad, len(got))
			}
		})
	}
}

// TestCUDAFixedBaseMatchesGnark: zk_fixed_base's products (keygen's on the
// GPU) equal gnark-crypto's ScalarMultiplication in G1 and G2 of both
// curves, for the edge scalars and random ones, over several windows; 150
// scalars are three of the stand-in's chunks of 64, the last one short.
func TestCUDAFixedBaseMatchesGnark(t *testing.T) {
	c := openCUDA(t)
	rng := rand.New(rand.NewPCG(26, 1))
	const n = 150
	t.Run("bn254/G1", func(t *testing.T) {
		_, _, g1, _ := bn254.Generators()
		s := fixedBaseScalars[fr.Element](fr.Modulus(), n, rng)
		checkFixedBase(t, c.SetFixedBaseWindow, g1, s, c.FixedBaseG1BN254, func(b *bn254.G1Affine, k *big.Int) (p bn254.G1Affine) {
			p.ScalarMultiplication(b, k)
			return
		})
	})
	t.Run("bn254/G2", func(t *testing.T) {
		_, _, _, g2 := bn254.Generators()
		s := fixedBaseScalars[fr.Element](fr.Modulus(), n, rng)
		checkFixedBase(t, c.SetFixedBaseWindow, g2, s, c.FixedBaseG2BN254, func(b *bn254.G2Affine, k *big.Int) (p bn254.G2Affine) {
			p.ScalarMultiplication(b, k)
			return
		})
	})
	t.Run("bls12-381/G1", func(t *testing.T) {
		_, _, g1, _ := bls12381.Generators()
		s := fixedBaseScalars[blsfr.Element](blsfr.Modulus(), n, rng)
		checkFixedBase(t, c.SetFixedBaseWindow, g1, s, c.FixedBaseG1BLS12381, func(b *bls12381.G1Affine, k *big.Int) (p bls12381.G1Affine) {
			p.ScalarMultiplication(b, k)
			return
		})
	})
	t.Run("bls12-381/G2", func(t *testing.T) {
		_, _, _, g2 := bls12381.Generators()
		s := fixedBaseScalars[blsfr.Element](blsfr.Modulus(), n, rng)
		checkFixedBase(t, c.SetFixedBaseWindow, g2, s, c.FixedBaseG2BLS12381, func(b *bls12381.G2Affine, k *big.Int) (p bls12381.G2Affine) {
			p.ScalarMultiplication(b, k)
			return
		})
	})
}

// TestCUDAFixedBaseEdges: another base than the generator (3·g), the
// infinity base (every product (0, 0), whatever out held), no scalars, and
// lengths that differ (an error, nothing written).
func TestCUDAFixedBaseEdges(t *testing.T) {
	c := openCUDA(t)
	_, _, g1, _ := bn254.Generators()
	var base bn254.G1Affine
	base.ScalarMultiplication(&g1, big.NewInt(3))
	s := fixedBaseScalars[fr.Element](fr.Modulus(), 70, rand.New(rand.NewPCG(26, 2)))
	checkFixedBase(t, c.SetFixedBaseWindow, base, s, c.FixedBaseG1BN254, func(b *bn254.G1Affine, k *big.Int) (p bn254.G1Affine) {
		p.ScalarMultiplication(b, k)
		return
	})

	out := make([]bn254.G1Affine, len(s))
	for i := range out {
		out[i] = g1
	}
	if err := c.FixedBaseG1BN254(out, &bn254.G1Affine{}, s); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if !out[i].IsInfinity() {
			t.Fatalf("product %d of the infinity base: %v, want (0, 0)", i, out[i])
		}
	}
	if err := c.FixedBaseG1BN254(nil, &g1, nil); err != nil {
		t.Errorf("no scalars: %v", err)
	}
	if err := c.FixedBaseG1BN254(out[:3], &g1, s[:4]); err == nil {
		t.Error("3 outputs for 4 scalars: no error")
	}
}

// TestCUDAFixedBaseFailures: a failed allocation, kernel or copy of
// zk_fixed_base is the call's error, its device memory all given back, and
// the next call succeeds.
func TestCUDAFixedBaseFailures(t *testing.T) {
	c := openOwn(t)
	defer c.Close()
	h := standIn(t, c)
	_, _, g1, _ := bn254.Generators()
	s := fixedBaseScalars[fr.Element](fr.Modulus(), 130, rand.New(rand.NewPCG(26, 3)))
	out := make([]bn254.G1Affine, len(s))
	live := h.Live()
	for _, what := range []string{"cudaMalloc", "kernel", "copy"} {
		for _, nth := range []int64{1, 3, 6} {
			h.Fail(what, nth)
			err := c.FixedBaseG1BN254(out, &g1, s)
			h.Fail(what, 0)
			if err == nil {
				t.Errorf("%s failing at call %d: no error", what, nth)
			}
			if got := h.Live(); got != live {
				t.Errorf("%s failing at call %d: %d device allocations left, want %d", what, nth, got, live)
			}
		}
	}
	if err := c.FixedBaseG1BN254(out, &g1, s); err != nil {
		t.Fatalf("after the failures: %v", err)
	}
	var k big.Int
	var want bn254.G1Affine
	s[129].BigInt(&k)
	if want.ScalarMultiplication(&g1, &k); out[129] != want {
		t.Errorf("after the failures, the last product is wrong")
	}
}

// BenchmarkCUDAFixedBase times zk_fixed_base (a setup's products, copies
// of scalars and points included) at 2^20 and 2^24 scalars, or the log2
// sizes of ZKPIPE_CUDA_FB_SIZES (e.g. 20,22,24), over G1 and G2 of both
// curves, on a GPU (the stand-in would take hours: skipped there). The CPU
// comb's figures at 2^24 on the H200 host: G1 3.6–4.8 s a query, G2 B
// 5.3–8.3 s (issue 26). Run on the H200:
//
//	ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so go test -run '^$' -bench CUDAFixedBase -benchtime 3x ./gpu
func BenchmarkCUDAFixedBase(b *testing.B) {
	c := openCUDA(b)
	if c.HostStandIn() != nil {
		b.Skip("the host stand-in: too slow to time")
	}
	sizes := []int{20, 24}
	if v := os.Getenv("ZKPIPE_CUDA_FB_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || k < 1 || k > 27 {
				b.Fatalf("ZKPIPE_CUDA_FB_SIZES: %q", f)
			}
			sizes = append(sizes, k)
		}
	}
	r := rand.New(rand.NewPCG(26, 4))
	for _, lg := range sizes {
		n := 1 << lg
		bn := make([]fr.Element, n)
		bls := make([]blsfr.Element, n)
		for i := range bn {
			bn[i] = fr.Element{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64() >> 3} // < 2^253 < r
			bls[i] = blsfr.Element{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64() >> 3}
		}
		_, _, g1, g2 := bn254.Generators()
		_, _, h1, h2 := bls12381.Generators()
		b.Run(fmt.Sprintf("bn254/G1/2^%d", lg), func(b *testing.B) {
			out := make([]bn254.G1Affine, n)
			for range b.N {
				if err := c.FixedBaseG1BN254(out, &g1, bn); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("bn254/G2/2^%d", lg), func(b *testing.B) {
			out := make([]bn254.G2Affine, n)
			for range b.N {
				if err := c.FixedBaseG2BN254(out, &g2, bn); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("bls12-381/G1/2^%d", lg), func(b *testing.B) {
			out := make([]bls12381.G1Affine, n)
			for range b.N {
				if err := c.FixedBaseG1BLS12381(out, &h1, bls); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("bls12-381/G2/2^%d", lg), func(b *testing.B) {
			out := make([]bls12381.G2Affine, n)
			for range b.N {
				if err := c.FixedBaseG2BLS12381(out, &h2, bls); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
