package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/proofdata"
)

// TransferClassify classifies the queries straight into the pinned buffers,
// a chunk at a time (three chunks of 1 MiB buffers here, the last one
// short), and the device ends up with exactly what Classify then Transfer
// would have put there: the same bitmap, values and indexes, dense or not;
// B from the host's classification (hostB) or classified like A and K.
func TestCUDATransferClassifyMatchesClassify(t *testing.T) {
	// 1 MiB pinned buffers, 2 lanes; no MSM tables (Load would build them)
	cuda := openOwn(t, gpu.WithMSMTables(0))
	defer cuda.Close()
	checkTransferClassify(t, cuda, 70_001, 17) // > 2 chunks of 28,992 scalars
}

// TransferClassify with several goroutines a query gives the device the
// same as Classify: 8 MiB pinned buffers hold chunks of 232,192 scalars,
// split in parts of at least 2^16 among 4 goroutines a query (12 shared by
// 3 queries; 6 each with B from the host). Sizes put the last chunk on
// each side of the parts' bounds: a whole chunk then one short part,
// exactly one whole chunk, and an odd length of several whole parts.
// (About a minute on the stand-in, whose Load of the keys is the most.)
func TestCUDATransferClassifyInPartsMatchesClassify(t *testing.T) {
	cuda := openOwn(t, gpu.WithMSMTables(0), gpu.WithPinnedBytes(8<<20), gpu.WithClassifyWorkers(12))
	defer cuda.Close()
	const per = 232_192
	for _, size := range []int{per + 70_001, per, 3*proofdata.MinClassifyPart + 101} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { checkTransferClassify(t, cuda, size, 19) })
	}
}

// checkTransferClassify runs TransferClassify on queries of about size
// scalars (A size, B size−1000, K size−100) in a domain of 2^logn, mixed,
// dense (B from the host) and all zero, and wants on the device what
// Classify gives.
func checkTransferClassify(t *testing.T, cuda *gpu.CUDA, size, logn int) {
	r := rand.New(rand.NewPCG(1, 2))
	// one key for the three modes: the stand-in's Load is most of the time
	key := key254(proofdata.HDivideByZ, &bases254{Domain: domain(1<<logn, proofdata.HDivideByZ),
		A: tileG1(size, false), B1: tileG1(size-1000, false), K: tileG1(size-100, false), Z: tileG1(1, false), B2: tileG2(size-1000, false)})
	res, err := cuda.Load(key)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for _, mode := range []struct {
		name string
		mode int
	}{{"mixed", mixed}, {"dense", dense}, {"zeros", zeros}, {"mixed counted", mixed}, {"undercounted", mixed}} {
		t.Run(mode.name, func(t *testing.T) {
			// W: the scalars of the mode, shuffled into a wire order by sel
			w := scalars(r, size+7, mode.mode)
			selA := make([]uint32, size)
			for j := range selA {
				selA[j] = uint32((j * 7919) % (size + 7))
			}
			selK := selA[50 : size-50]
			selB := selA[1000:]
			v := &proofdata.Vectors{A: proofdata.Scalars(scalars(r, 10, dense)), B: proofdata.Scalars(scalars(r, 10, dense)), C: proofdata.Scalars(scalars(r, 10, dense))}
			hostB := mode.name == "dense"
			if hostB {
				vals := make([]fr.Element, len(selB))
				for j, wire := range selB {
					vals[j] = w[wire]
				}
				v.QB = classify(vals)
			}
			// W's significant scalars bound each query's tail: the device
			// holds them in that much room; one fewer is refused, never
			// written past
			switch mode.name {
			case "mixed counted":
				v.Tail = proofdata.CountSignificant(proofdata.Scalars(w), proofdata.One(key.Curve), 2)
			case "undercounted": // one short of A's own tail
				a := make([]fr.Element, len(selA))
				for j, wire := range selA {
					a[j] = w[wire]
				}
				v.Tail = proofdata.CountSignificant(proofdata.Scalars(a), proofdata.One(key.Curve), 2) - 1
			}
			s, err := cuda.TransferClassify(context.Background(), res, v, proofdata.Scalars(w), selA, selB, selK, hostB)
			if mode.name == "undercounted" {
				if err == nil || !strings.Contains(err.Error(), "significant scalars counted") {
					if err == nil {
						cuda.Free(s)
					}
					t.Fatalf("a tail bound one short of W's count: %v, want a refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cuda.Free(s)
			for i, q := range []struct {
				name string
				sel  []uint32
				host *proofdata.Query
			}{{"A", selA, &v.QA}, {"B", selB, &v.QB}, {"K", selK, &v.QK}} {
				vals := make([]fr.Element, len(q.sel))
				for j, wire := range q.sel {
					vals[j] = w[wire]
				}
				want := classify(vals)
				if q.host.Len != want.Len || q.host.NumOnes != want.NumOnes || q.host.Dense != want.Dense {
					t.Fatalf("%s: host query %d scalars, %d ones, dense %v; want %d, %d, %v",
						q.name, q.host.Len, q.host.NumOnes, q.host.Dense, want.Len, want.NumOnes, want.Dense)
				}
				ones, got, idx, err := cuda.StagedQuery(s, i)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ones, want.Ones) || !slices.Equal(got, want.Vals) || !slices.Equal(idx, want.Idx) {
					t.Fatalf("%s on the device differs from Classify: %d bitmap words, %d values, %d indexes; want %d, %d, %d",
						q.name, len(ones), len(got), len(idx), len(want.Ones), len(want.Vals), len(want.Idx))
				}
			}
		})
	}
}
