package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// These tests need libzkpipe_cuda.so (gpu/cuda/build.sh) and a GPU: the
// library is $ZKPIPE_CUDA_LIB, else cuda/libzkpipe_cuda.so beside this
// file. Without either they skip, saying why.

var (
	cudaOnce sync.Once
	cudaDev  *gpu.CUDA
	cudaErr  error
)

func openCUDA(t testing.TB) *gpu.CUDA {
	t.Helper()
	cudaOnce.Do(func() {
		path := os.Getenv("ZKPIPE_CUDA_LIB")
		if path == "" {
			path, _ = filepath.Abs("cuda/libzkpipe_cuda.so")
		}
		// ZKPIPE_CUDA_MSM_TABLES_MIB sets the table budget (0: MSMs over
		// the bases), so both paths run the same tests.
		var opts []gpu.CUDAOption
		if cfg := measureConfig(); cfg != (gpu.CUDAConfig{}) {
			opts = append(opts, gpu.WithConfig(cfg))
		}
		if v := os.Getenv("ZKPIPE_CUDA_MSM_TABLES_MIB"); v != "" {
			mib, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				cudaErr = fmt.Errorf("ZKPIPE_CUDA_MSM_TABLES_MIB: %w", err)
				return
			}
			opts = append(opts, gpu.WithMSMTables(mib<<20))
		}
		tables := os.Getenv("ZKPIPE_CUDA_MSM_TABLES_MIB") != ""
		cudaDev, cudaErr = gpu.OpenCUDA(path, opts...)
		if cudaErr == nil && cudaDev.HostStandIn() != nil && !tables {
			// The stand-in emulates the GPU's arithmetic on the CPU, where
			// building a table of 2^16 bases or more takes minutes: the
			// shared backend leaves them out there, and the table tests
			// (cuda_table_test.go) run tables at small sizes instead.
			cudaDev.Close()
			cudaDev, cudaErr = gpu.OpenCUDA(path, append(opts, gpu.WithMSMTables(0))...)
		}
	})
	if cudaErr != nil {
		t.Skipf("no CUDA backend, skipping GPU test: %v", cudaErr)
	}
	return cudaDev
}

// measureConfig is the shared backend's CUDAConfig from the variables
// that the zkpipe command reads (commands/cudaenv.go), so that the H200
// session's grids (bench/h200-session.sh: msmgrid, envgrid) measure
// TestCUDAMeasure under them; unset, the defaults. Test-only: the gpu
// package itself reads no environment.
func measureConfig() gpu.CUDAConfig {
	atoi := func(name string) int { v, _ := strconv.Atoi(os.Getenv(name)); return v }
	return gpu.CUDAConfig{MSMWindow: atoi("ZKPIPE_MSM_WINDOW"), MSMChunk: atoi("ZKPIPE_MSM_CHUNK"),
		MSMSegment: atoi("ZKPIPE_MSM_SEGMENT"), Spin: os.Getenv("ZKPIPE_CUDA_SPIN") == "1",
		WaitPollMicros: atoi("ZKPIPE_CUDA_WAIT_POLL_US"), MSMPieceLog: atoi("ZKPIPE_MSM_PIECE_LOG"),
		SerialTails: os.Getenv("ZKPIPE_CUDA_TAIL_SPLIT") == "0"}
}

func TestOpenCUDAMissingLibrary(t *testing.T) {
	_, err := gpu.OpenCUDA(filepath.Join(t.TempDir(), "nope.so"))
	if err == nil {
		t.Fatal("OpenCUDA of a missing library succeeded")
	}
	// No path: beside the executable, else a named system directory; with
	// neither holding the library, ErrNoCUDA.
	c, err := gpu.OpenCUDA("")
	if err == nil {
		defer c.Close()
		if lib := c.Library(); filepath.Dir(lib) != exeDir(t) && !slices.Contains(gpu.CUDASystemDirs, filepath.Dir(lib)) {
			t.Fatalf("OpenCUDA(\"\") loaded %s: neither beside the executable nor in a system directory", lib)
		}
	} else if !errors.Is(err, gpu.ErrNoCUDA) {
		t.Fatalf("OpenCUDA(\"\"): %v, want ErrNoCUDA", err)
	}
}

func exeDir(t *testing.T) string {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(exe)
}

// ─── BN254 through the curve seam ────────────────────────────────────────────

// bases254 is a BN254 key's points, as these tests build them (BLS12-381's:
// cuda_bls12381_test.go).
type bases254 = proofdata.Bases[bn254.G1Affine, bn254.G2Affine, fft.Domain]

// key254 wraps b as a BN254 key of convention conv.
func key254(conv proofdata.HConvention, b *bases254) *proofdata.Key {
	return proofdata.NewKey(curve.BN254, conv, int(b.Domain.Cardinality), b)
}

// basesOf is k's points (a key254's).
func basesOf(k *proofdata.Key) *bases254 { return k.Bases.(*bases254) }

// jac1 and jac2 are a backend's G1 and G2 results as BN254 points.
func jac1(p proofdata.Point) *bn254.G1Jac { return p.(*bn254.G1Jac) }
func jac2(p proofdata.Point) *bn254.G2Jac { return p.(*bn254.G2Jac) }

// frs views scalars as BN254's Fr.
func frs(s []proofdata.Scalar) []fr.Element { return proofdata.Elements[fr.Element](s) }

// ─── random inputs ───────────────────────────────────────────────────────────

// randFr returns a uniformish element (any value < r is a valid Montgomery form).
func randFr(r *rand.Rand) fr.Element {
	var x fr.Element
	for {
		for i := range x {
			x[i] = r.Uint64()
		}
		x[3] &= 0x3fffffffffffffff
		if x[3] < 0x30644e72e131a029 { // below r: a valid Montgomery form
			return x
		}
	}
}

var (
	pointsMu sync.Mutex
	g1Cache  []bn254.G1Affine
	g2Cache  []bn254.G2Affine
)

// distinctG1 returns m random distinct G1 points (cached).
func distinctG1(m int) []bn254.G1Affine {
	pointsMu.Lock()
	defer pointsMu.Unlock()
	if len(g1Cache) < m {
		r := rand.New(rand.NewPCG(1, uint64(m)))
		sc := make([]fr.Element, m)
		for i := range sc {
			sc[i] = randFr(r)
		}
		_, _, g, _ := bn254.Generators()
		g1Cache = bn254.BatchScalarMultiplicationG1(&g, sc)
	}
	return g1Cache[:m]
}

func distinctG2(m int) []bn254.G2Affine {
	pointsMu.Lock()
	defer pointsMu.Unlock()
	if len(g2Cache) < m {
		r := rand.New(rand.NewPCG(2, uint64(m)))
		sc := make([]fr.Element, m)
		for i := range sc {
			sc[i] = randFr(r)
		}
		_, _, _, g := bn254.Generators()
		g2Cache = bn254.BatchScalarMultiplicationG2(&g, sc)
	}
	return g2Cache[:m]
}

// tileG1 returns n points cycling through distinct ones; with edges, a
// repeated point and the point at infinity.
func tileG1(n int, edges bool) []bn254.G1Affine {
	d := distinctG1(min(n, 1<<14))
	out := make([]bn254.G1Affine, n)
	for i := range out {
		out[i] = d[i%len(d)]
	}
	if edges && n > 4 {
		out[1] = out[0]
		out[3] = bn254.G1Affine{}
	}
	return out
}

func tileG2(n int, edges bool) []bn254.G2Affine {
	d := distinctG2(min(n, 512))
	out := make([]bn254.G2Affine, n)
	for i := range out {
		out[i] = d[i%len(d)]
	}
	if edges && n > 4 {
		out[1] = out[0]
		out[3] = bn254.G2Affine{}
	}
	return out
}

// scalar modes
const (
	mixed  = iota // zeros, ones, r−1 and random
	zeros         // every scalar zero
	ones          // every scalar one
	dense         // every scalar significant and random
	repeat        // every scalar r−1: one bucket per window
	small         // 2, 3, 4
)

func scalars(r *rand.Rand, n, mode int) []fr.Element {
	s := make([]fr.Element, n)
	var one, minusOne fr.Element
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
				s[i] = randFr(r)
			}
		case zeros:
		case ones:
			s[i] = one
		case dense:
			s[i] = randFr(r)
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

// classify mirrors stages' pin/transfer classification.
func classify(s []fr.Element) proofdata.Query {
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

func domain(n int, conv proofdata.HConvention) *fft.Domain {
	if conv == proofdata.HOddCoset {
		w := fft.NewDomain(uint64(2 * n)).Generator
		return fft.NewDomain(uint64(n), fft.WithShift(w))
	}
	return fft.NewDomain(uint64(n))
}

type fixture struct {
	key  *proofdata.Key
	vecs func() *proofdata.Vectors // fresh copies: ComputeH consumes a, b, c
}

func newFixture(r *rand.Rand, size, mode int, conv proofdata.HConvention, edges bool) fixture {
	n := 1
	for n < size {
		n *= 2
	}
	k := &bases254{Domain: domain(n, conv)}
	k.A = tileG1(size, edges)
	k.B1 = tileG1(size, edges)
	slices.Reverse(k.B1)
	k.K = tileG1(size, edges)
	k.K = append(k.K[size/3:], k.K[:size/3]...)
	hl := n - 1
	if conv == proofdata.HOddCoset || n == 1 {
		hl = n
	}
	k.Z = tileG1(hl, edges)
	k.B2 = tileG2(size, edges)
	l := max(size-3, 1)
	a, b, c := scalars(r, l, dense), scalars(r, l, dense), scalars(r, l, dense)
	qa, qb, qk := classify(scalars(r, size, mode)), classify(scalars(r, size, mode)), classify(scalars(r, size, mode))
	return fixture{key: key254(conv, k), vecs: func() *proofdata.Vectors {
		return &proofdata.Vectors{A: proofdata.Scalars(slices.Clone(a)), B: proofdata.Scalars(slices.Clone(b)), C: proofdata.Scalars(slices.Clone(c)), QA: qa, QB: qb, QK: qk}
	}}
}

// compare runs every backend operation on cuda and cpu and fails on a difference.
func compare(t *testing.T, cuda *gpu.CUDA, f fixture, g2 bool) {
	t.Helper()
	ctx := context.Background()
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
	sc, _ := cpu.Transfer(ctx, rc, f.vecs())
	sg, err := cuda.Transfer(ctx, rg, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	defer cuda.Free(sg)

	onesC, _ := cpu.BatchAddG1(ctx, sc)
	onesG, err := cuda.BatchAddG1(ctx, sg)
	if err != nil {
		t.Fatal(err)
	}
	eqSums(t, "batch-add", onesC, onesG)
	tailC, err := cpu.TailMSMG1(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	tailG, err := cuda.TailMSMG1(ctx, sg)
	if err != nil {
		t.Fatal(err)
	}
	eqSums(t, "tail-msm", tailC, tailG)
	if g2 {
		c2, _ := cpu.BatchAddG2(ctx, sc)
		g2s, err := cuda.BatchAddG2(ctx, sg)
		if err != nil {
			t.Fatal(err)
		}
		if !samePoint(c2, g2s) {
			t.Errorf("batch-add G2 differs")
		}
		c2, _ = cpu.MSMG2(ctx, sc)
		g2s, err = cuda.MSMG2(ctx, sg)
		if err != nil {
			t.Fatal(err)
		}
		if !samePoint(c2, g2s) {
			t.Errorf("msm G2 differs")
		}
	}
	// h itself, then MSM_H on fresh copies
	hC, err := cpu.ComputeH(ctx, f.key, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.PutH(hC)
	hG, err := cuda.ComputeHScalars(ctx, sg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.key.HLen() {
		if hC[i] != hG[i] {
			t.Fatalf("h[%d] differs (of %d): cpu %x cuda %x", i, f.key.HLen(), hC[i], hG[i])
		}
	}
	sg2, err := cuda.Transfer(ctx, rg, f.vecs())
	if err != nil {
		t.Fatal(err)
	}
	defer cuda.Free(sg2)
	sc2, _ := cpu.Transfer(ctx, rc, f.vecs())
	mC, err := cpu.MSMH(ctx, sc2)
	if err != nil {
		t.Fatal(err)
	}
	mG, err := cuda.MSMH(ctx, sg2)
	if err != nil {
		t.Fatal(err)
	}
	if !samePoint(mC, mG) {
		t.Errorf("msm-h differs")
	}
}

func eqSums(t *testing.T, what string, a, b proofdata.G1Sums) {
	t.Helper()
	if !samePoint(a.A, b.A) {
		t.Errorf("%s A differs", what)
	}
	if !samePoint(a.B1, b.B1) {
		t.Errorf("%s B1 differs", what)
	}
	if !samePoint(a.K, b.K) {
		t.Errorf("%s K differs", what)
	}
}

func TestCUDAMatchesCPU(t *testing.T) {
	cuda := openCUDA(t)
	r := rand.New(rand.NewPCG(3, 4))
	modes := map[int]string{mixed: "mixed", zeros: "zeros", ones: "ones", dense: "dense", repeat: "repeat", small: "small"}
	sizes := []int{1, 2, 3, 100, 1000, 4097, 70001}
	if testing.Short() {
		sizes = sizes[:4]
	}
	for _, size := range sizes {
		for _, mode := range []int{mixed, zeros, ones, dense, repeat, small} {
			for _, conv := range []proofdata.HConvention{proofdata.HDivideByZ, proofdata.HOddCoset} {
				if conv == proofdata.HOddCoset && mode != mixed {
					continue
				}
				g2 := size <= 4097 || mode == mixed
				t.Run(fmt.Sprintf("n=%d/%s/conv=%d", size, modes[mode], conv), func(t *testing.T) {
					compare(t, cuda, newFixture(r, size, mode, conv, true), g2)
				})
			}
		}
	}
}

// TestCUDALarge compares a 2^22-element MSM, batch-addition and H with the CPU.
func TestCUDALarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large: skipped in -short")
	}
	cuda := openCUDA(t)
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1 << 22
	compare(t, cuda, newFixture(r, n, mixed, proofdata.HDivideByZ, true), false)
}

// ─── full proofs ─────────────────────────────────────────────────────────────

func verify(vk groth16.VerifyingKey, r stream.Result) error {
	return gnarksrc.VerifyFiles(vk, r.Proof, r.Public)
}

func TestCUDAProofsVerify(t *testing.T) {
	cuda := openCUDA(t)
	for _, name := range []string{"mulchain", "bits", "commit"} {
		keys := provertest.Setup(t, name, 300)
		for _, g2 := range []string{"cuda", "cpu"} {
			t.Run(name+"/bg2="+g2, func(t *testing.T) {
				dir := t.TempDir()
				cfg := provertest.Config(dir, 2, 2)
				cfg.Backend = cuda
				if g2 == "cuda" {
					cfg.G2 = cuda
				}
				var jobs []*stages.Job
				for i := range 4 {
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
						t.Fatalf("job %s: gnark rejects the CUDA proof: %v", r.ID, err)
					}
				}
			})
		}
	}
}

// ─── measurements ────────────────────────────────────────────────────────────

// BenchmarkCUDAMeasure prints device timings, a line for each kernel and
// size (medians of its own repeats: run it once, -benchtime 1x), for
// bench/h200-session.sh's measure, msmgrid, nttgrid, profile and ncu steps.
func BenchmarkCUDAMeasure(b *testing.B) {
	// ZKPIPE_CUDA_MEASURE=msm times the MSMs alone, without gnark's CPU
	// figures (bench/h200-session.sh's msmgrid step); =ntt the NTTs and
	// NTT+MSM_H alone (its nttgrid step).
	msmOnly := os.Getenv("ZKPIPE_CUDA_MEASURE") == "msm"
	nttOnly := os.Getenv("ZKPIPE_CUDA_MEASURE") == "ntt"
	cuda := openCUDA(b)
	b.Logf("device: %s", cuda.Device())
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
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
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		return ts[len(ts)/2], nil
	}
	// ZKPIPE_CUDA_MSM_SIZES=20,22,24,27 adds sizes (log2) to the G1 MSMs
	// timed; 2^27 takes 12 GiB of host memory for its bases and scalars.
	sizes := []int{20, 22, 24}
	if v := os.Getenv("ZKPIPE_CUDA_MSM_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			lg, err := strconv.Atoi(f)
			if err != nil || lg < 1 || lg > 28 {
				b.Fatalf("ZKPIPE_CUDA_MSM_SIZES: %q", v)
			}
			sizes = append(sizes, lg)
		}
	}
	if nttOnly {
		sizes = nil
	}
	for _, lg := range sizes {
		n := 1 << lg
		k := key254(proofdata.HDivideByZ, &bases254{Domain: fft.NewDomain(2), A: tileG1(n, false)})
		t0 := time.Now()
		res, err := cuda.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		load := time.Since(t0)
		v := &proofdata.Vectors{QA: classify(scalars(r, n, dense))}
		s, err := cuda.Transfer(ctx, res, v)
		if err != nil {
			b.Fatal(err)
		}
		d, err := median(func() error { _, err := cuda.TailMSMG1(ctx, s); return err })
		if err != nil {
			b.Fatal(err)
		}
		line := fmt.Sprintf("G1 MSM 2^%d: cuda %.1f ms (load %.0f ms, resident %d MiB)", lg, float64(d.Microseconds())/1000,
			float64(load.Microseconds())/1000, cuda.ResidentBytes(k)>>20)
		if lg <= 22 && !msmOnly {
			var p bn254.G1Jac
			t0 := time.Now()
			if _, err := p.MultiExp(basesOf(k).A, frs(v.QA.Vals), ecc.MultiExpConfig{}); err != nil {
				b.Fatal(err)
			}
			dc := time.Since(t0)
			line += fmt.Sprintf(", gnark cpu %.1f ms (%.1f×)", float64(dc.Microseconds())/1000, float64(dc)/float64(d))
		}
		fmt.Println(line)
		cuda.Free(s)
		res.Close()
	}
	for _, lg := range []int{20} {
		if nttOnly {
			break
		}
		n := 1 << lg
		k := key254(proofdata.HDivideByZ, &bases254{Domain: fft.NewDomain(2), B1: tileG1(n, false), B2: tileG2(n, false)})
		res, err := cuda.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		v := &proofdata.Vectors{QB: classify(scalars(r, n, dense))}
		s, err := cuda.Transfer(ctx, res, v)
		if err != nil {
			b.Fatal(err)
		}
		d, err := median(func() error { _, err := cuda.MSMG2(ctx, s); return err })
		if err != nil {
			b.Fatal(err)
		}
		if msmOnly {
			fmt.Printf("G2 MSM 2^20: cuda %.1f ms\n", float64(d.Microseconds())/1000)
		} else {
			var p bn254.G2Jac
			t0 := time.Now()
			if _, err := p.MultiExp(basesOf(k).B2, frs(v.QB.Vals), ecc.MultiExpConfig{}); err != nil {
				b.Fatal(err)
			}
			dc := time.Since(t0)
			fmt.Printf("G2 MSM 2^20: cuda %.1f ms, gnark cpu %.1f ms (%.1f×)\n", float64(d.Microseconds())/1000, float64(dc.Microseconds())/1000, float64(dc)/float64(d))
		}
		cuda.Free(s)
		res.Close()
	}
	if msmOnly {
		return
	}
	// ZKPIPE_CUDA_NTT_SIZES=24 times the NTTs at those sizes (log2) alone,
	// without NTT+MSM_H (bench/h200-session.sh's ncu step profiles them).
	nttSizes := []int{20, 24}
	if nttOnly {
		nttSizes = []int{16, 20, 22, 24}
	}
	hSizes := []int{16, 20, 22}
	if v := os.Getenv("ZKPIPE_CUDA_NTT_SIZES"); v != "" {
		nttSizes, hSizes = nil, nil
		for _, f := range strings.Split(v, ",") {
			lg, err := strconv.Atoi(f)
			if err != nil || lg < 1 || lg > 28 {
				b.Fatalf("ZKPIPE_CUDA_NTT_SIZES: %q", v)
			}
			nttSizes = append(nttSizes, lg)
		}
	}
	for _, lg := range hSizes {
		n := 1 << lg
		k := key254(proofdata.HDivideByZ, &bases254{Domain: fft.NewDomain(uint64(n)), A: tileG1(2, false), Z: tileG1(n-1, false)})
		res, err := cuda.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		va, vb, vc := scalars(r, n, dense), scalars(r, n, dense), scalars(r, n, dense)
		qa := classify(scalars(r, 2, dense))
		var tx, th []time.Duration
		for i := range 6 {
			t0 := time.Now()
			s, err := cuda.Transfer(ctx, res, &proofdata.Vectors{A: proofdata.Scalars(va), B: proofdata.Scalars(vb), C: proofdata.Scalars(vc), QA: qa})
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := cuda.MSMH(ctx, s); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			cuda.Free(s)
			if i > 0 {
				tx, th = append(tx, t1.Sub(t0)), append(th, t2.Sub(t1))
			}
		}
		slices.Sort(tx)
		slices.Sort(th)
		fmt.Printf("2^%d: transfer of a,b,c %.1f ms, NTT+MSM_H %.1f ms (medians of 5)\n", lg,
			float64(tx[2].Microseconds())/1000, float64(th[2].Microseconds())/1000)
		res.Close()
	}
	for _, lg := range nttSizes {
		n := 1 << lg
		k := key254(proofdata.HDivideByZ, &bases254{Domain: fft.NewDomain(uint64(n))})
		res, err := cuda.Load(k)
		if err != nil {
			b.Fatal(err)
		}
		d, err := gpu.TimeNTT(cuda, res, scalars(r, n, dense), 20)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("NTT 2^%d: %.3f ms (mean of 20, CUDA events)\n", lg, float64(d.Microseconds())/1000)
		res.Close()
	}
}

// sameH fails t at the first of the hl elements where the CPU's and the
// CUDA backend's h differ.
func sameH(t *testing.T, hC, hG []fr.Element, hl int) {
	t.Helper()
	for i := range hl {
		if !hC[i].Equal(&hG[i]) {
			t.Fatalf("h[%d] differs (of %d): cpu %s cuda %s", i, hl, hC[i].String(), hG[i].String())
		}
	}
}

// A bits circuit of about 196,000 wires on a backend whose TransferClassify
// splits its chunks (5 MiB buffers: chunks of 145,088 scalars, two parts
// each, then a last chunk of one; 6 goroutines, 2 a query): its proof
// verifies with gnark. (About a minute of CPU on the stand-in; B from the
// host in parts is TestCUDATransferClassifyInPartsMatchesClassify's dense
// case.)
func TestCUDAProofsVerifyWithQueriesInParts(t *testing.T) {
	cuda := openOwn(t, gpu.WithMSMTables(0), gpu.WithPinnedBytes(5<<20), gpu.WithClassifyWorkers(6))
	defer cuda.Close()
	keys := provertest.Setup(t, "bits", 3*proofdata.MinClassifyPart+77)
	cfg := provertest.Config(t.TempDir(), 1, 2)
	cfg.Backend, cfg.G2 = cuda, cuda
	jobs := []*stages.Job{{Request: stream.Request{ID: "p0", Generate: &stream.Generate{Seed: 3}}}}
	res := provertest.Run(t, cfg, []*stages.Circuit{keys.Circuit(t, "bits")}, jobs, 5*time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("results %+v", res)
	}
	if err := verify(keys.VK, res[0]); err != nil {
		t.Fatalf("gnark rejects the CUDA proof: %v", err)
	}
}
