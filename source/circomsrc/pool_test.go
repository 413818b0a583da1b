package circomsrc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/runtest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// poolingBackend makes the engine pool W, a, b, c, as it does for a
// backend that stages everything on a device (ClassifiesOnTransfer); A and K are
// classified on the host and staged as the CPU backend stages. It counts
// the distinct a vectors it is handed.
type poolingBackend struct {
	*gpu.CPU
	mu   sync.Mutex
	seen map[*proofdata.Scalar]bool
}

func (b *poolingBackend) ClassifiesOnTransfer() bool { return true }

func (b *poolingBackend) TransferClassify(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors, w []proofdata.Scalar, selA, selB, selK []uint32, hostB bool) (*proofdata.Staged, error) {
	b.mu.Lock()
	b.seen[&v.A[0]] = true
	b.mu.Unlock()
	for _, q := range []struct {
		q   *proofdata.Query
		sel []uint32
	}{{&v.QA, selA}, {&v.QK, selK}} {
		n := len(q.sel)
		proofdata.Classify(q.q, proofdata.One(curve.BN254), w, q.sel, make([]uint64, (n+63)/64), make([]uint32, n), make([]proofdata.Scalar, n))
	}
	return b.CPU.Transfer(ctx, r, v)
}

// TestPooledVectors: circom jobs (input and wtns) in a stream whose engine
// pools W, a, b, c, several jobs in every stage at once, reuse the vectors
// (left with another job's values) and still prove their own statements:
// every proof passes the zkey's verifying key in emit, its public output is
// the one a fresh calculator computes for its inputs, and snarkjs accepts
// them. Run with -race: a vector shared by two live jobs races.
func TestPooledVectors(t *testing.T) {
	ctx := context.Background()
	arr := circuit(t, "arr")
	code, err := os.ReadFile(arr.wasm)
	if err != nil {
		t.Fatal(err)
	}
	calc, err := NewCalculator(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	defer calc.Close(ctx)

	const proofs = 32
	var jobs []*stages.Job
	want := map[string]string{} // id → y, the public output
	tmp := t.TempDir()
	for i := range proofs {
		in := fmt.Sprintf(`{"xs":[%d,%d,3],"m":[[%d,5],[6,%d]]}`, i+1, 2*i+1, i*i, 7-i)
		w, err := calc.Calculate(ctx, json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprint("j", i)
		want[id] = calc.cc.decimals(w[1:2])[0]
		if i%4 == 3 {
			jobs = append(jobs, wtnsJob(id, "arr", arr.wtns(t, tmp, id, in)))
		} else {
			jobs = append(jobs, inputJob(id, "arr", in))
		}
	}

	out := t.TempDir()
	// One worker a stage but three in synthesize: some dozen jobs in
	// flight, fewer than the stream's, so vectors come back and go out again.
	cfg := runtest.Config(out, 1, 1)
	cfg.Shapes[stages.Synthesize] = stages.Shape{Workers: 3, Queue: 1}
	backend := &poolingBackend{CPU: gpu.NewCPU(2, 2), seen: map[*proofdata.Scalar]bool{}} // runtest.Config's CPU
	cfg.Backend = backend
	res := runtest.Run(t, cfg, []*stages.Circuit{load(t, arr, true)}, jobs, 3*time.Minute)
	if len(res) != proofs {
		t.Fatalf("%d results for %d jobs", len(res), proofs)
	}
	for k, r := range res {
		if r.Error != "" {
			t.Errorf("%s: %s", r.ID, r.Error)
			continue
		}
		if len(r.PublicInputs) != 1 || r.PublicInputs[0] != want[r.ID] {
			t.Errorf("%s: public output %v, want [%s] (its own inputs')", r.ID, r.PublicInputs, want[r.ID])
		}
		if k < 2 && !snarkjsVerify(t, arr.vkey, r.Public, r.Proof) {
			t.Errorf("%s: snarkjs rejects zkpipe's proof", r.ID)
		}
	}
	if n := len(backend.seen); n >= proofs {
		t.Errorf("%d a vectors for %d proofs: none was reused", n, proofs)
	}
}
