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
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	blsfft "github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// BLS12-381 on the CUDA backend: the same comparisons with the CPU backend
// as BN254's (compare: batch-addition, tail MSMs, G2, h and MSM_H), at the
// sizes and scalar modes of TestCUDAMatchesCPU; over the host stand-in
// these run the library's BLS12-381 kernels (gpu/cuda: 6-limb Fp, Fp2 over
// it, 255-bit scalars, the eager NTT over its Fr).

// basesBLS is a BLS12-381 key's points.
type basesBLS = proofdata.Bases[bls12381.G1Affine, bls12381.G2Affine, blsfft.Domain]

func keyBLS(conv proofdata.HConvention, b *basesBLS) *proofdata.Key {
	return proofdata.NewKey(curve.BLS12_381, conv, int(b.Domain.Cardinality), b)
}

// samePoint says whether two backends' results are the same point (of
// either curve, either group).
func samePoint(a, b proofdata.Point) bool {
	switch x := a.(type) {
	case *bn254.G1Jac:
		y, ok := b.(*bn254.G1Jac)
		return ok && x.Equal(y)
	case *bn254.G2Jac:
		y, ok := b.(*bn254.G2Jac)
		return ok && x.Equal(y)
	case *bls12381.G1Jac:
		y, ok := b.(*bls12381.G1Jac)
		return ok && x.Equal(y)
	case *bls12381.G2Jac:
		y, ok := b.(*bls12381.G2Jac)
		return ok && x.Equal(y)
	}
	return false
}

// randBLSFr: any value < r is a valid Montgomery form.
func randBLSFr(r *rand.Rand) blsfr.Element {
	var x blsfr.Element
	for {
		for i := range x {
			x[i] = r.Uint64()
		}
		x[3] &= 0x7fffffffffffffff
		if x[3] < 0x73eda753299d7d48 {
			return x
		}
	}
}

var (
	blsPointsMu sync.Mutex
	blsG1Cache  []bls12381.G1Affine
	blsG2Cache  []bls12381.G2Affine
)

func distinctBLS(m int) ([]bls12381.G1Affine, []bls12381.G2Affine) {
	blsPointsMu.Lock()
	defer blsPointsMu.Unlock()
	if len(blsG1Cache) < m {
		r := rand.New(rand.NewPCG(7, uint64(m)))
		sc := make([]blsfr.Element, m)
		for i := range sc {
			sc[i] = randBLSFr(r)
		}
		_, _, g1, g2 := bls12381.Generators()
		blsG1Cache = bls12381.BatchScalarMultiplicationG1(&g1, sc)
		blsG2Cache = bls12381.BatchScalarMultiplicationG2(&g2, sc[:min(m, 512)])
	}
	return blsG1Cache[:m], blsG2Cache[:min(m, len(blsG2Cache))]
}

// tileBLS returns n points of each group cycling through distinct ones;
// with edges, a repeated point and the point at infinity.
func tileBLS(n int, edges bool) ([]bls12381.G1Affine, []bls12381.G2Affine) {
	d1, d2 := distinctBLS(min(max(n, 1), 1<<14))
	o1, o2 := make([]bls12381.G1Affine, n), make([]bls12381.G2Affine, n)
	for i := range o1 {
		o1[i], o2[i] = d1[i%len(d1)], d2[i%len(d2)]
	}
	if edges && n > 4 {
		o1[1], o2[1] = o1[0], o2[0]
		o1[3], o2[3] = bls12381.G1Affine{}, bls12381.G2Affine{}
	}
	return o1, o2
}

// scalarsBLS: the modes of scalars (mixed, zeros, …) over BLS12-381's Fr.
func scalarsBLS(r *rand.Rand, n, mode int) []blsfr.Element {
	s := make([]blsfr.Element, n)
	var one, minusOne blsfr.Element
	one.SetOne()
	minusOne.Neg(&one)
	for i := range s {
		switch mode {
		case mixed:
			switch r.IntN(5) {
			case 0:
			case 1:
				s[i] = one
			case 2:
				s[i] = minusOne
			default:
				s[i] = randBLSFr(r)
			}
		case ones:
			s[i] = one
		case dense:
			s[i] = randBLSFr(r)
			if s[i].IsZero() || s[i].IsOne() {
				s[i].SetUint64(7)
			}
		case repeat:
			s[i] = minusOne
		case small:
			s[i].SetUint64(uint64(2 + i%3))
		}
	}
	return s
}

func classifyBLS(s []blsfr.Element) proofdata.Query {
	q := proofdata.Query{Len: len(s), Ones: make([]uint64, (len(s)+63)/64)}
	for j := range s {
		switch {
		case s[j].IsZero():
		case s[j].IsOne():
			q.Ones[j/64] |= 1 << (j % 64)
			q.NumOnes++
		default:
			q.Idx = append(q.Idx, uint32(j))
			q.Vals = append(q.Vals, proofdata.Scalar(s[j]))
		}
	}
	if len(q.Vals) == len(s) {
		q.Idx, q.Dense = nil, true
	}
	return q
}

func domainBLS(n int, conv proofdata.HConvention) *blsfft.Domain {
	if conv == proofdata.HOddCoset {
		w := blsfft.NewDomain(uint64(2 * n)).Generator
		return blsfft.NewDomain(uint64(n), blsfft.WithShift(w))
	}
	return blsfft.NewDomain(uint64(n))
}

// newFixtureBLS is newFixture over BLS12-381.
func newFixtureBLS(r *rand.Rand, size, mode int, conv proofdata.HConvention, edges bool) fixture {
	n := 1
	for n < size {
		n *= 2
	}
	k := &basesBLS{Domain: domainBLS(n, conv)}
	k.A, k.B2 = tileBLS(size, edges)
	k.B1, _ = tileBLS(size, edges)
	slices.Reverse(k.B1)
	k.K, _ = tileBLS(size, edges)
	k.K = append(k.K[size/3:], k.K[:size/3]...)
	hl := n - 1
	if conv == proofdata.HOddCoset || n == 1 {
		hl = n
	}
	k.Z, _ = tileBLS(hl, edges)
	l := max(size-3, 1)
	a, b, c := scalarsBLS(r, l, dense), scalarsBLS(r, l, dense), scalarsBLS(r, l, dense)
	qa, qb, qk := classifyBLS(scalarsBLS(r, size, mode)), classifyBLS(scalarsBLS(r, size, mode)), classifyBLS(scalarsBLS(r, size, mode))
	return fixture{key: keyBLS(conv, k), vecs: func() *proofdata.Vectors {
		return &proofdata.Vectors{A: proofdata.Scalars(slices.Clone(a)), B: proofdata.Scalars(slices.Clone(b)), C: proofdata.Scalars(slices.Clone(c)), QA: qa, QB: qb, QK: qk}
	}}
}

// TestCUDAMatchesCPUBLS12381 is TestCUDAMatchesCPU over BLS12-381.
func TestCUDAMatchesCPUBLS12381(t *testing.T) {
	cuda := openCUDA(t)
	r := rand.New(rand.NewPCG(13, 14))
	modes := map[int]string{mixed: "mixed", zeros: "zeros", ones: "ones", dense: "dense", repeat: "repeat", small: "small"}
	sizes := []int{1, 2, 3, 100, 1000, 4097, 70001}
	if testing.Short() {
		// and 4097, whose G1 MSMs' level-0 tiles widen on the host
		// stand-in (its 32 pretend threads: driver.cuh's level0_chunk)
		sizes = []int{1, 2, 3, 100, 4097}
	}
	for _, size := range sizes {
		for _, mode := range []int{mixed, zeros, ones, dense, repeat, small} {
			for _, conv := range []proofdata.HConvention{proofdata.HDivideByZ, proofdata.HOddCoset} {
				if conv == proofdata.HOddCoset && mode != mixed {
					continue
				}
				g2 := size <= 4097 || mode == mixed
				t.Run(fmt.Sprintf("n=%d/%s/conv=%d", size, modes[mode], conv), func(t *testing.T) {
					compare(t, cuda, newFixtureBLS(r, size, mode, conv, true), g2)
				})
			}
		}
	}
}

// TestCUDATablesMatchCPUBLS12381: the MSMs over precomputed tables of
// BLS12-381 points (every base set tabled: WithMSMTableMinBases(1)).
func TestCUDATablesMatchCPUBLS12381(t *testing.T) {
	c := openOwn(t, gpu.WithMSMTables(1<<30), gpu.WithMSMTableMinBases(1))
	defer c.Close()
	off := openOwn(t, gpu.WithMSMTables(0))
	defer off.Close()
	r := rand.New(rand.NewPCG(15, 16))
	for _, size := range []int{3, 100} {
		f := newFixtureBLS(r, size, mixed, proofdata.HDivideByZ, true)
		if with, without := c.ResidentBytes(f.key), off.ResidentBytes(f.key); with <= without {
			t.Fatalf("n=%d: the key got no tables (%d bytes with, %d without)", size, with, without)
		}
		t.Run(fmt.Sprint(size), func(t *testing.T) { compare(t, c, f, true) })
	}
}

// TestCUDATailBatchBLS12381: several jobs' tail MSMs in one batched run
// equal each job's alone and the CPU's.
func TestCUDATailBatchBLS12381(t *testing.T) {
	cuda := openCUDA(t)
	r := rand.New(rand.NewPCG(17, 18))
	f := newFixtureBLS(r, 300, mixed, proofdata.HDivideByZ, false)
	cpu := gpu.NewCPU(0, 0)
	rc, err := cpu.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	rg, err := cuda.Load(f.key)
	if err != nil {
		t.Fatal(err)
	}
	defer rg.Close()
	ctx := t.Context()
	var staged []*proofdata.Staged
	var want []proofdata.G1Sums
	for i := range 3 {
		v := f.vecs()
		q := classifyBLS(scalarsBLS(r, f.key.Size.A, []int{mixed, dense, small}[i]))
		v.QA = q
		sc, _ := cpu.Transfer(ctx, rc, v)
		w, err := cpu.TailMSMG1(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, w)
		sg, err := cuda.Transfer(ctx, rg, v)
		if err != nil {
			t.Fatal(err)
		}
		defer cuda.Free(sg)
		staged = append(staged, sg)
	}
	got, errs := cuda.TailMSMG1Batch(ctx, staged)
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("job %d: %v", i, errs[i])
		}
		eqSums(t, fmt.Sprintf("batch job %d", i), want[i], got[i])
	}
}

// TestCUDAProofsVerifyBLS12381: BLS12-381 circuits proven on the CUDA
// backend (B₂ on it too), alone and through gpu.Multi over two stand-in
// devices, every proof accepted by gnark's verifier.
func TestCUDAProofsVerifyBLS12381(t *testing.T) {
	cuda := openCUDA(t)
	dev1 := openOwn(t)
	defer dev1.Close()
	multi, err := gpu.NewMulti([]gpu.Device{cuda, dev1}, []string{"cuda:0", "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mulchain", "commit"} {
		keys := provertest.SetupOn(t, curve.BLS12_381, name, 300)
		for _, be := range []struct {
			name string
			b    stages.Backend
		}{{"cuda", cuda}, {"multi", multi}} {
			t.Run(name+"/"+be.name, func(t *testing.T) {
				cfg := provertest.Config(t.TempDir(), 2, 2)
				cfg.Backend, cfg.G2 = be.b, be.b
				var jobs []*stages.Job
				for i := range 3 {
					jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprintf("j%d", i), Generate: &stream.Generate{Seed: int64(i)}}})
				}
				res := provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, name)}, jobs, 2*time.Minute)
				if len(res) != len(jobs) {
					t.Fatalf("%d results for %d jobs", len(res), len(jobs))
				}
				for _, r := range res {
					if r.Error != "" {
						t.Fatalf("job %s: %s", r.ID, r.Error)
					}
					if err := verify(keys.VK, r); err != nil {
						t.Fatalf("job %s: gnark rejects the BLS12-381 proof: %v", r.ID, err)
					}
				}
			})
		}
	}
}

// BenchmarkCUDAMeasureBLS12381 prints BLS12-381's kernel timings (medians
// of five after a warm-up, -benchtime 1x) beside issue 25's targets: G1
// MSM 2^20, 2^22, 2^24, G2 MSM 2^20 and the NTT 2^24 over its Fr.
// BenchmarkCUDAMeasure prints BN254's; `-bench CUDAMeasure` runs both
// (bench/bls12381-kernels.sh). ZKPIPE_CUDA_MSM_SIZES sets the G1 sizes as
// there; gnark's CPU MSM is timed beside the G1 MSMs up to 2^22 and G2's.
func BenchmarkCUDAMeasureBLS12381(b *testing.B) {
	cuda := openCUDA(b)
	b.Logf("device: %s", cuda.Device())
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	median := func(f func() error) (time.Duration, error) {
		if err := f(); err != nil { // warm-up
			return 0, err
		}
		var ts []time.Duration
		for range 5 {
			t0 := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			ts = append(ts, time.Since(t0))
		}
		slices.Sort(ts)
		return ts[len(ts)/2], nil
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	// Over the host stand-in (no GPU) every size is 2^12 times smaller, so
	// that the benchmark's code runs in CI time; its figures mean nothing.
	shrink := 0
	if cuda.HostStandIn() != nil {
		shrink = 12
		fmt.Println("host stand-in: every size below is 2^12 times smaller than it says")
	}
	denseBLS := func(n int) []blsfr.Element { return scalarsBLS(r, n, dense) }
	sizes := []int{20, 22, 24}
	if v := os.Getenv("ZKPIPE_CUDA_MSM_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			lg, err := strconv.Atoi(f)
			if err != nil || lg < 1 || lg > 27 {
				b.Fatalf("ZKPIPE_CUDA_MSM_SIZES: %q", v)
			}
			sizes = append(sizes, lg)
		}
	}
	target := map[int]float64{20: 8, 22: 25, 24: 90}
	for _, lg := range sizes {
		n := 1 << max(lg-shrink, 1)
		a, _ := tileBLS(n, false)
		k := keyBLS(proofdata.HDivideByZ, &basesBLS{Domain: blsfft.NewDomain(2), A: a})
		t0 := time.Now()
		res, err := cuda.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		load := time.Since(t0)
		sc := denseBLS(n)
		s, err := cuda.Transfer(ctx, res, &proofdata.Vectors{QA: classifyBLS(sc)})
		if err != nil {
			b.Fatal(err)
		}
		d, err := median(func() error { _, err := cuda.TailMSMG1(ctx, s); return err })
		if err != nil {
			b.Fatal(err)
		}
		line := fmt.Sprintf("BLS12-381 G1 MSM 2^%d: cuda %.1f ms (target ≤ %.0f ms; load %.0f ms, resident %d MiB)", lg, ms(d),
			target[lg], ms(load), cuda.ResidentBytes(k)>>20)
		if lg <= 22 && shrink == 0 {
			var p bls12381.G1Jac
			t0 := time.Now()
			if _, err := p.MultiExp(a, sc, ecc.MultiExpConfig{}); err != nil {
				b.Fatal(err)
			}
			dc := time.Since(t0)
			line += fmt.Sprintf(", gnark cpu %.1f ms (%.1f×)", ms(dc), float64(dc)/float64(d))
		}
		fmt.Println(line)
		cuda.Free(s)
		res.Close()
	}
	{
		n := 1 << (20 - shrink)
		b1, b2 := tileBLS(n, false)
		k := keyBLS(proofdata.HDivideByZ, &basesBLS{Domain: blsfft.NewDomain(2), B1: b1, B2: b2})
		res, err := cuda.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		sc := denseBLS(n)
		s, err := cuda.Transfer(ctx, res, &proofdata.Vectors{QB: classifyBLS(sc)})
		if err != nil {
			b.Fatal(err)
		}
		d, err := median(func() error { _, err := cuda.MSMG2(ctx, s); return err })
		if err != nil {
			b.Fatal(err)
		}
		var p bls12381.G2Jac
		t0 := time.Now()
		if _, err := p.MultiExp(b2, sc, ecc.MultiExpConfig{}); err != nil {
			b.Fatal(err)
		}
		dc := time.Since(t0)
		fmt.Printf("BLS12-381 G2 MSM 2^20: cuda %.1f ms (target ≤ 25 ms), gnark cpu %.1f ms (%.1f×)\n", ms(d), ms(dc), float64(dc)/float64(d))
		cuda.Free(s)
		res.Close()
	}
	for _, lg := range []int{20, 24} {
		n := 1 << (lg - shrink)
		g, _ := tileBLS(2, false)
		k := keyBLS(proofdata.HDivideByZ, &basesBLS{Domain: blsfft.NewDomain(uint64(n)), A: g, Z: g})
		res, err := cuda.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		d, err := gpu.TimeNTT(cuda, res, denseBLS(n), 20)
		if err != nil {
			b.Fatal(err)
		}
		line := fmt.Sprintf("BLS12-381 NTT 2^%d over Fr: cuda %.2f ms (device time)", lg, float64(d.Microseconds())/1000)
		if lg == 24 {
			line += " (target ≤ 4.5 ms)"
		}
		fmt.Println(line)
		res.Close()
	}
}

// A key of a curve the library has no kernels for is refused at Load with
// errors.ErrUnsupported naming it, on one device and through gpu.Multi;
// every curve zkpipe knows loads (curve.All: the CUDA backend covers them).
func TestCUDALoadRefusesCurveWithoutKernels(t *testing.T) {
	dev0 := openOwn(t)
	defer dev0.Close()
	dev1 := openOwn(t)
	defer dev1.Close()
	m, err := gpu.NewMulti([]gpu.Device{dev0, dev1}, []string{"cuda:0", "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	k := &proofdata.Key{Curve: curve.ID(200)}
	for name, be := range map[string]interface {
		Load(*proofdata.Key) (proofdata.Resident, error)
	}{"cuda": dev0, "multi": m} {
		r, err := be.Load(k)
		if err == nil {
			r.Close()
			t.Errorf("%s loaded a key of curve(200)", name)
		} else if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "curve(200)") {
			t.Errorf("%s: %v, want errors.ErrUnsupported naming curve(200)", name, err)
		}
	}
	r := rand.New(rand.NewPCG(19, 20))
	for _, f := range []fixture{newFixture(r, 8, mixed, proofdata.HDivideByZ, false), newFixtureBLS(r, 8, mixed, proofdata.HDivideByZ, false)} {
		res, err := dev0.Load(f.key)
		if err != nil {
			t.Fatalf("%s: %v", f.key.Curve, err)
		}
		res.Close()
	}
	if len(curve.All) != 2 {
		t.Errorf("curve.All has %d curves: give the CUDA backend the new one's kernels and tests", len(curve.All))
	}
}
