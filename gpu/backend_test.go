package gpu

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/zkpipe/zkpipe/proofdata"
)

// backend is what these conformance tests drive: every backend (CPU, CUDA)
// must pass them.
type backend interface {
	Load(k *proofdata.Key) (proofdata.Resident, error)
	Transfer(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors) (*proofdata.Staged, error)
	BatchAddG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	TailMSMG1(ctx context.Context, s *proofdata.Staged) (proofdata.G1Sums, error)
	BatchAddG2(ctx context.Context, s *proofdata.Staged) (bn254.G2Jac, error)
	MSMG2(ctx context.Context, s *proofdata.Staged) (bn254.G2Jac, error)
	Free(s *proofdata.Staged)
}

// scalarKinds draws the scalars of one test case.
var scalarKinds = map[string]func(rng *rand.Rand, j int) fr.Element{
	"random": func(rng *rand.Rand, _ int) fr.Element { return randFr(rng) },
	"zeros":  func(*rand.Rand, int) fr.Element { return fr.Element{} },
	"ones":   func(*rand.Rand, int) fr.Element { return fr.One() },
	"mixed": func(rng *rand.Rand, _ int) fr.Element {
		switch rng.Intn(3) {
		case 0:
			return fr.Element{}
		case 1:
			return fr.One()
		}
		return randFr(rng)
	},
	"minus-one": func(*rand.Rand, int) fr.Element { var m fr.Element; m.SetOne().Neg(&m); return m },
}

func randFr(rng *rand.Rand) fr.Element {
	var e fr.Element
	e.SetUint64(rng.Uint64())
	var x fr.Element
	x.SetUint64(rng.Uint64())
	e.Mul(&e, &x).Mul(&e, &x).Add(&e, &x)
	return e
}

// randomBases returns n G1 and G2 points; with repeats some are equal, and
// with infinity some are the point at infinity.
func randomBases(rng *rand.Rand, n int, repeats, infinity bool) ([]bn254.G1Affine, []bn254.G2Affine) {
	s := make([]fr.Element, n)
	for i := range s {
		s[i] = randFr(rng)
	}
	_, _, g1, g2 := bn254.Generators()
	p1 := bn254.BatchScalarMultiplicationG1(&g1, s)
	p2 := bn254.BatchScalarMultiplicationG2(&g2, s)
	for i := range n {
		if repeats && i%5 == 1 {
			p1[i], p2[i] = p1[i-1], p2[i-1]
		}
		if infinity && i%7 == 3 {
			p1[i], p2[i] = bn254.G1Affine{}, bn254.G2Affine{}
		}
	}
	return p1, p2
}

// testOnesPlusTailIsTheFullMSM checks, for many sizes and scalar
// populations, that batch-addition plus the tail MSM equals gnark-crypto's
// MSM over all scalars, in G1 (A, B₁, K) and G2 (B₂).
func testOnesPlusTailIsTheFullMSM(t *testing.T, b backend, sizes []int) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range sizes {
		for kind, draw := range scalarKinds {
			for _, edges := range []bool{false, true} {
				t.Run(fmt.Sprintf("n=%d/%s/edges=%v", n, kind, edges), func(t *testing.T) {
					g1, g2 := randomBases(rng, n, edges, edges)
					w := make([]fr.Element, n)
					sel := make([]uint32, n)
					for j := range w {
						w[j] = draw(rng, j)
						sel[j] = uint32(j)
					}
					key := &proofdata.Key{Domain: fft.NewDomain(4), A: g1, B1: g1, K: g1, B2: g2}
					v := &proofdata.Vectors{}
					for _, q := range []*proofdata.Query{&v.QA, &v.QB, &v.QK} {
						proofdata.Classify(q, w, sel, make([]uint64, (n+63)/64), make([]uint32, n), make([]fr.Element, n))
					}
					r, err := b.Load(key)
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					ctx := context.Background()
					s, err := b.Transfer(ctx, r, v)
					if err != nil {
						t.Fatal(err)
					}
					defer b.Free(s)
					ones, err := b.BatchAddG1(ctx, s)
					if err != nil {
						t.Fatal(err)
					}
					tails, err := b.TailMSMG1(ctx, s)
					if err != nil {
						t.Fatal(err)
					}
					ones2, err := b.BatchAddG2(ctx, s)
					if err != nil {
						t.Fatal(err)
					}
					tail2, err := b.MSMG2(ctx, s)
					if err != nil {
						t.Fatal(err)
					}

					var want1 bn254.G1Jac
					var want2 bn254.G2Jac
					if n > 0 {
						if _, err := want1.MultiExp(g1, w, ecc.MultiExpConfig{}); err != nil {
							t.Fatal(err)
						}
						if _, err := want2.MultiExp(g2, w, ecc.MultiExpConfig{}); err != nil {
							t.Fatal(err)
						}
					}
					for name, pair := range map[string][2]bn254.G1Jac{"A": {ones.A, tails.A}, "B1": {ones.B1, tails.B1}, "K": {ones.K, tails.K}} {
						got := pair[0]
						got.AddAssign(&pair[1])
						if !equalG1(&got, &want1) {
							t.Errorf("%s: ones + tail ≠ full MSM", name)
						}
					}
					got2 := ones2
					got2.AddAssign(&tail2)
					if !equalG2(&got2, &want2) {
						t.Error("B2: ones + tail ≠ full MSM")
					}
				})
			}
		}
	}
}

// equalG1 compares in affine form, so both encodings of infinity agree.
func equalG1(a, b *bn254.G1Jac) bool {
	var x, y bn254.G1Affine
	x.FromJacobian(a)
	y.FromJacobian(b)
	return x.Equal(&y)
}

func equalG2(a, b *bn254.G2Jac) bool {
	var x, y bn254.G2Affine
	x.FromJacobian(a)
	y.FromJacobian(b)
	return x.Equal(&y)
}

func TestCPUOnesPlusTailIsTheFullMSM(t *testing.T) {
	testOnesPlusTailIsTheFullMSM(t, NewCPU(2, 2), []int{0, 1, 2, 63, 64, 65, 300})
}

// Under a core share the MSMs run with fewer tasks (down to one, under
// gnark-crypto's semaphore): the sums must not change.
func TestCPUSharingCoresOnesPlusTailIsTheFullMSM(t *testing.T) {
	c := NewCPU(0, 0)
	c.ShareCores(3)
	testOnesPlusTailIsTheFullMSM(t, c, []int{0, 1, 2, 63, 64, 65, 300})
	if r := c.share.running.Load(); r != 0 {
		t.Fatalf("%d heavy operations still counted after the MSMs returned", r)
	}
}

func TestShareCoresDividesTheCoresAmongRunningOperations(t *testing.T) {
	c := NewCPU(5, 7)
	if n, done := c.heavy(c.MSMTasks); n != 5 {
		t.Fatalf("without a share: %d tasks, want MSMTasks 5", n)
	} else {
		done()
	}
	c.ShareCores(16)
	var dones []func()
	for i, want := range []int{16, 8, 5, 4, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1} {
		n, done := c.heavy(c.MSMTasks)
		if n != want {
			t.Fatalf("operation %d running at once: %d tasks, want %d", i+1, n, want)
		}
		dones = append(dones, done)
	}
	for _, done := range dones[1:] {
		done()
	}
	if n, done := c.heavy(c.FFTTasks); n != 8 {
		t.Fatalf("beside one running operation: %d tasks, want 8", n)
	} else {
		done()
	}
	dones[0]()
	if r := c.share.running.Load(); r != 0 {
		t.Fatalf("%d operations counted after all ended", r)
	}
}

func TestCheckQueryRejectsWrongSizes(t *testing.T) {
	c := NewCPU(1, 1)
	_, g2 := randomBases(rand.New(rand.NewSource(2)), 3, false, false)
	g1, _ := randomBases(rand.New(rand.NewSource(3)), 3, false, false)
	r, _ := c.Load(&proofdata.Key{Domain: fft.NewDomain(4), A: g1, B1: g1, K: g1, B2: g2})
	v := &proofdata.Vectors{QA: proofdata.Query{Len: 2, Ones: make([]uint64, 1), Dense: true, Vals: make([]fr.Element, 2)}}
	s, _ := c.Transfer(context.Background(), r, v)
	if _, err := c.BatchAddG1(context.Background(), s); err == nil {
		t.Error("batch-add accepted 2 scalars for 3 bases")
	}
	if _, err := c.TailMSMG1(context.Background(), s); err == nil {
		t.Error("tail MSM accepted 2 scalars for 3 bases")
	}
}

// A panic in one chunk of a parallel loop must reach the caller's goroutine
// (where the pipeline turns it into the job's error), not crash the process.
func TestAPanicInAChunkReachesTheCaller(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("the chunk's panic did not reach the caller")
		}
	}()
	parallel(100, 4, func(chunk, _, _ int) {
		if chunk == 2 {
			panic("chunk 2")
		}
	})
}
