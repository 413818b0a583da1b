package stages_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// vectorCheck watches a stream's pooled vectors: a, b, c must be held by
// one live job at a time, and each job's W (as classified into K), a, b and
// c must still hold its own values when the later stages read them. A
// buffer handed to two live jobs breaks one of these (and, under -race,
// shows as a data race between the two jobs' stages).
type vectorCheck struct {
	t   *testing.T
	mu  sync.Mutex
	sum map[*proofdata.Vectors]digest            // per live job, at the end of synthesize
	own map[*proofdata.Scalar]*proofdata.Vectors // a, b, c base → the job holding it
	all map[*proofdata.Scalar]bool               // every a, b, c base seen
}

// digest sums a job's K scalars and its a, b, c.
type digest struct{ k, a, b, c fr.Element }

func sum(vs []proofdata.Scalar) (s fr.Element) {
	v := proofdata.Elements[fr.Element](vs)
	for i := range v {
		s.Add(&s, &v[i])
	}
	return s
}

type checkingSource struct {
	stages.Source
	c *vectorCheck
}

func (s checkingSource) Synthesize(ctx context.Context, j *stages.Job) error {
	if err := s.Source.Synthesize(ctx, j); err != nil {
		return err
	}
	var d digest
	w := proofdata.Elements[fr.Element](j.W)
	for _, wire := range j.Circuit.Sel.K {
		d.k.Add(&d.k, &w[wire])
	}
	d.a, d.b, d.c = sum(j.Vec.A), sum(j.Vec.B), sum(j.Vec.C)
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sum[&j.Vec] = d
	for _, v := range [][]proofdata.Scalar{j.Vec.A, j.Vec.B, j.Vec.C} {
		if other, live := c.own[&v[0]]; live {
			c.t.Errorf("job %s got an a, b or c buffer that a live job (%p) still holds", j.ID, other)
		}
		c.own[&v[0]] = &j.Vec
		c.all[&v[0]] = true
	}
	return nil
}

type checkingBackend struct {
	*gpu.CPU
	c *vectorCheck
}

// check compares a job's K scalars, read from w, and its a, b, c with
// their digest at the end of synthesize.
func (c *vectorCheck) check(stage string, v *proofdata.Vectors, ws []proofdata.Scalar, selK []uint32) {
	c.mu.Lock()
	want := c.sum[v]
	c.mu.Unlock()
	got := digest{k: want.k, a: sum(v.A), b: sum(v.B), c: sum(v.C)}
	if ws != nil {
		w := proofdata.Elements[fr.Element](ws)
		got.k = fr.Element{}
		for _, wire := range selK {
			got.k.Add(&got.k, &w[wire])
		}
	}
	if got != want {
		c.t.Errorf("%s: a job's W, a, b or c changed after synthesize: another job wrote into them", stage)
	}
}

// ClassifiesOnTransfer makes the engine pool W, a, b, c (it does so for
// backends that stage everything on a device).
func (b checkingBackend) ClassifiesOnTransfer() bool { return true }

// TransferClassify checks the job's vectors; A and K are classified
// on the host, into fresh buffers, and staged as the CPU backend stages.
func (b checkingBackend) TransferClassify(ctx context.Context, r proofdata.Resident, v *proofdata.Vectors, w []proofdata.Scalar, selA, selB, selK []uint32, hostB bool) (*proofdata.Staged, error) {
	b.c.check("transfer", v, w, selK)
	if !hostB {
		b.c.t.Error("the CPU's B_G2 reads B's host query, but TransferClassify was not told to keep it")
	}
	for _, q := range []struct {
		q   *proofdata.Query
		sel []uint32
	}{{&v.QA, selA}, {&v.QK, selK}} {
		n := len(q.sel)
		proofdata.Classify(q.q, proofdata.One(r.Key().Curve), w, q.sel, make([]uint64, (n+63)/64), make([]uint32, n), make([]proofdata.Scalar, n))
	}
	return b.CPU.Transfer(ctx, r, v)
}

func (b checkingBackend) MSMH(ctx context.Context, s *proofdata.Staged) (proofdata.Point, error) {
	b.c.check("msm-h", s.Host, nil, nil)
	h, err := b.CPU.MSMH(ctx, s)
	// the engine hands a, b, c back after this returns
	b.c.mu.Lock()
	for _, v := range [][]proofdata.Scalar{s.Host.A, s.Host.B, s.Host.C} {
		delete(b.c.own, &v[0])
	}
	delete(b.c.sum, s.Host)
	b.c.mu.Unlock()
	return h, err
}

// A stream of many jobs with several workers in every stage, on a backend
// that stages on a device (so that the engine pools), takes W, a, b, c and
// the solver's flags from the engine's pools and reuses them; no
// buffer is ever held by two live jobs, and every proof verifies (Emit
// checks each with gnark's groth16.Verify before writing it). Run it with
// -race: a buffer handed back too early races with its next job.
func TestPooledVectorsAreNeverSharedBetweenLiveJobs(t *testing.T) {
	keys := provertest.Setup(t, "mulchain", 1<<8)
	cfg := provertest.Config(t.TempDir(), 2, 2)
	cfg.Shapes[stages.Synthesize] = stages.Shape{Workers: 3, Queue: 2}
	check := &vectorCheck{t: t, sum: map[*proofdata.Vectors]digest{}, own: map[*proofdata.Scalar]*proofdata.Vectors{}, all: map[*proofdata.Scalar]bool{}}
	cpu := gpu.NewCPU(2, 2) // provertest.Config's
	cfg.Backend = checkingBackend{CPU: cpu, c: check}
	circuit := keys.Circuit(t, "chain")
	circuit.Source = checkingSource{Source: circuit.Source, c: check}

	const proofs = 24
	var jobs []*stages.Job
	for i := range proofs {
		jobs = append(jobs, &stages.Job{Request: stream.Request{ID: fmt.Sprint("j", i), Generate: &stream.Generate{Seed: int64(i)}}})
	}
	res := provertest.Run(t, cfg, []*stages.Circuit{circuit}, jobs, 5*time.Minute)
	if len(res) != proofs {
		t.Fatalf("%d results for %d jobs", len(res), proofs)
	}
	for _, r := range res {
		if r.Error != "" {
			t.Errorf("job %s: %s", r.ID, r.Error)
		}
	}
	check.mu.Lock()
	defer check.mu.Unlock()
	if len(check.all) >= 3*proofs {
		t.Errorf("%d a, b, c buffers for %d proofs: none was reused", len(check.all), proofs)
	}
	if len(check.own) != 0 {
		t.Errorf("%d a, b, c buffers still held after the stream", len(check.own))
	}
}
