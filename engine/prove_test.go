package engine

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// chainWitness is mulchain's satisfying witness for seed.
func chainWitness(t *testing.T, c *stages.Circuit, seed int64) witness.Witness {
	t.Helper()
	w, err := c.Source.(*gnarksrc.Source).Witness(seed)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// verifyByGnark checks proof with gnark's own verifier against c's
// verifying key and w's public part.
func verifyByGnark(t *testing.T, c *stages.Circuit, proof groth16.Proof, w witness.Witness) {
	t.Helper()
	pub, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, c.Source.(*gnarksrc.Source).VerifyingKey(), pub); err != nil {
		t.Errorf("gnark rejects the proof Prove returned: %v", err)
	}
}

// outFiles lists what the output directory holds.
func outFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestProveReturnsAProofGnarkVerifiesAndWritesNoFile(t *testing.T) {
	out := t.TempDir()
	c := loadChain(t)
	e, err := New(context.Background(), cpuOptions(out), c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	before := outFiles(t, out)
	for _, name := range []string{"", c.Name} { // "" names the only circuit
		w := chainWitness(t, c, 3)
		proof, err := e.Prove(context.Background(), name, w)
		if err != nil {
			t.Fatalf("Prove(%q): %v", name, err)
		}
		verifyByGnark(t, c, proof, w)
	}
	if after := outFiles(t, out); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("Prove wrote into the output directory: %v, before %v", after, before)
	}
	if s := e.Snapshot(); s.Proved != 2 || s.Failed != 0 {
		t.Errorf("snapshot counts %d proved, %d failed; want 2, 0", s.Proved, s.Failed)
	}
}

// unsatisfied is w with its first public value changed: no longer Y = x^n.
func unsatisfied(t *testing.T, w witness.Witness) witness.Witness {
	t.Helper()
	data, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	data[12+31] ^= 1 // the low byte of the first value, after the 12-byte header
	bad, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	return bad
}

func TestProveOfABadWitnessFailsAloneAndTheEngineGoesOn(t *testing.T) {
	c := loadChain(t)
	e, err := New(context.Background(), cpuOptions(t.TempDir()), c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := e.Prove(ctx, "", unsatisfied(t, chainWitness(t, c, 1))); err == nil || !strings.Contains(err.Error(), "unsatisfied") {
		t.Errorf("Prove of an unsatisfied witness: %v, want an error saying so", err)
	}
	// a witness of another circuit's shape, one of another field, an unknown circuit
	other, err := frontend.NewWitness(&twoPublic{A: 1, B: 2}, ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Prove(ctx, "", other); err == nil || !strings.Contains(err.Error(), "public and") {
		t.Errorf("Prove of a witness of another shape: %v", err)
	}
	bls, err := frontend.NewWitness(&blocker{X: 2, Y: 4}, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Prove(ctx, "", bls); err == nil || !strings.Contains(err.Error(), "another field") {
		t.Errorf("Prove of a BLS12-381 witness: %v", err)
	}
	if _, err := e.Prove(ctx, "nope", chainWitness(t, c, 1)); err == nil || !strings.Contains(err.Error(), `unknown circuit "nope"`) {
		t.Errorf("Prove of an unknown circuit: %v", err)
	}
	if _, err := e.Prove(ctx, "", nil); err == nil {
		t.Error("Prove of no witness: no error")
	}
	w := chainWitness(t, c, 2)
	proof, err := e.Prove(ctx, "", w)
	if err != nil {
		t.Fatalf("Prove after the failures: %v", err)
	}
	verifyByGnark(t, c, proof, w)
}

func TestConcurrentProvesShareTheEngine(t *testing.T) {
	c := loadChain(t)
	e, err := New(context.Background(), cpuOptions(t.TempDir()), c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			w := chainWitness(t, c, int64(i+1))
			proof, err := e.Prove(context.Background(), "", w)
			if err != nil {
				t.Errorf("Prove %d: %v", i, err)
				return
			}
			verifyByGnark(t, c, proof, w)
		})
	}
	wg.Wait()
	if s := e.Snapshot(); s.Proved != n {
		t.Errorf("%d proved, want %d", s.Proved, n)
	}
}

func TestProveDuringARunAndRunsOneAfterAnother(t *testing.T) {
	out := t.TempDir()
	c := loadChain(t)
	e, err := New(context.Background(), cpuOptions(out), c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()

	jobs := make(chan stream.Line)
	results := make(chan stream.Result)
	ran := make(chan error, 1)
	go func() {
		ran <- e.Run(ctx, jobs, func(r stream.Result) error { results <- r; return nil })
	}()
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "r1", Generate: &stream.Generate{Seed: 1}}}
	if r := <-results; r.Error != "" {
		t.Fatalf("r1: %s", r.Error)
	}
	// the Run is going (its jobs channel open): Prove beside it, and a
	// second Run is refused
	w := chainWitness(t, c, 9)
	proof, err := e.Prove(ctx, "", w)
	if err != nil {
		t.Fatalf("Prove during a Run: %v", err)
	}
	verifyByGnark(t, c, proof, w)
	if err := e.Run(ctx, generated("x", 1), func(stream.Result) error { return nil }); !errors.Is(err, ErrRunning) {
		t.Errorf("a Run beside a Run: %v, want ErrRunning", err)
	}
	jobs <- stream.Line{Number: 2, Request: stream.Request{ID: "r2", Generate: &stream.Generate{Seed: 2}}}
	if r := <-results; r.Error != "" {
		t.Fatalf("r2: %s", r.Error)
	}
	close(jobs)
	if err := <-ran; err != nil {
		t.Fatalf("first Run: %v", err)
	}

	// a second Run, once the first has returned, proves and writes its files
	var lines []stream.Result
	if err := e.Run(ctx, generated("s", 2), func(r stream.Result) error { lines = append(lines, r); return nil }); err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if len(lines) != 2 {
		t.Fatalf("second Run: %d results, want 2", len(lines))
	}
	vk := c.Source.(*gnarksrc.Source).VerifyingKey()
	for _, r := range lines {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.ID, r.Error)
		}
		if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
			t.Errorf("%s: gnark rejects %s: %v", r.ID, r.Proof, err)
		}
	}
	if s := e.Snapshot(); s.Proved != 5 {
		t.Errorf("%d proved over two Runs and a Prove, want 5", s.Proved)
	}
}

// twoPublic is a witness of a shape mulchain's is not.
type twoPublic struct {
	A, B frontend.Variable `gnark:",public"`
}

func (c *twoPublic) Define(api frontend.API) error { api.AssertIsEqual(c.A, c.B); return nil }

// blocker is a one-constraint circuit whose hint, for X = 7, waits until
// the test lets it go: a job held inside synthesize.
type blocker struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

// blockerIn tells of a job held; closing blockerRelease lets it go. Each
// test that holds jobs sets both before its engine starts.
var blockerIn, blockerRelease chan struct{}

// blockerEngine is an engine on the CPU over the blocker circuit; it
// registers the hint and sets the channels afresh.
func blockerEngine(t *testing.T) (*Engine, groth16.VerifyingKey) {
	t.Helper()
	blockerIn, blockerRelease = make(chan struct{}, 1), make(chan struct{})
	solver.RegisterHint(blockingInverse)
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &blocker{})
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gnarksrc.New("blocker", ccs, pk, vk, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), cpuOptions(t.TempDir()), c)
	if err != nil {
		t.Fatal(err)
	}
	return e, vk
}

func blockerWitness(t *testing.T, x int64) witness.Witness {
	t.Helper()
	w, err := frontend.NewWitness(&blocker{X: x, Y: x * x}, ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func blockingInverse(field *big.Int, in, out []*big.Int) error {
	if in[0].Int64() == 7 {
		blockerIn <- struct{}{}
		<-blockerRelease
	}
	if out[0].ModInverse(in[0], field) == nil {
		return fmt.Errorf("%s has no inverse", in[0])
	}
	return nil
}

func (c *blocker) Define(api frontend.API) error {
	inv, err := api.Compiler().NewHint(blockingInverse, 1, c.X)
	if err != nil {
		return err
	}
	api.AssertIsEqual(api.Mul(c.X, inv[0]), 1)
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	return nil
}

func TestProveReturnsWhenItsContextEnds(t *testing.T) {
	e, vk := blockerEngine(t)
	defer e.Close()
	prove := func(ctx context.Context, x int64) (witness.Witness, groth16.Proof, error) {
		w := blockerWitness(t, x)
		p, err := e.Prove(ctx, "", w)
		return w, p, err
	}

	// already cancelled: at once
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := prove(done, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("Prove under a cancelled context: %v", err)
	}

	// cancelled while its job is held in synthesize: Prove returns with
	// ctx's error without waiting for the job
	ctx, stop := context.WithCancelCause(context.Background())
	got := make(chan error, 1)
	held := blockerWitness(t, 7)
	go func() {
		_, err := e.Prove(ctx, "", held)
		got <- err
	}()
	<-blockerIn
	stop(errors.New("the caller gave up"))
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("Prove cancelled mid-job: %v, want context.Canceled", err)
	}
	close(blockerRelease) // the held job ends; the engine goes on

	w, proof, err := prove(context.Background(), 5)
	if err != nil {
		t.Fatalf("Prove after a cancelled one: %v", err)
	}
	pub, _ := w.Public()
	if err := groth16.Verify(proof, vk, pub); err != nil {
		t.Errorf("gnark rejects the proof: %v", err)
	}
	if s := e.Snapshot(); s.Failed != 0 {
		t.Errorf("a cancelled Prove counted as %d failed", s.Failed)
	}
}

func TestProveAndRunAfterClose(t *testing.T) {
	c := loadChain(t)
	e, err := New(context.Background(), cpuOptions(t.TempDir()), c)
	if err != nil {
		t.Fatal(err)
	}
	w := chainWitness(t, c, 1)
	if _, err := e.Prove(context.Background(), "", w); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Prove(context.Background(), "", w); !errors.Is(err, ErrClosed) {
		t.Errorf("Prove after Close: %v, want ErrClosed", err)
	}
	if err := e.Run(context.Background(), generated("c", 1), func(stream.Result) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}

// TestCloseDuringProve: Close while a Prove's job is held returns once
// the job lets go, and the Prove returns either a proof gnark accepts (the
// job got through first) or ErrClosed; never a hang, never a bad proof.
func TestCloseDuringProve(t *testing.T) {
	e, vk := blockerEngine(t)
	w := blockerWitness(t, 7)
	type res struct {
		p   groth16.Proof
		err error
	}
	got := make(chan res, 1)
	go func() {
		p, err := e.Prove(context.Background(), "", w)
		got <- res{p, err}
	}()
	<-blockerIn
	closed := make(chan error, 1)
	go func() { closed <- e.Close() }()
	for e.HasCircuit("blocker") { // false once Close has begun
		runtime.Gosched()
	}
	close(blockerRelease)
	r := <-got
	switch {
	case errors.Is(r.err, ErrClosed):
	case r.err != nil:
		t.Errorf("Prove during Close: %v, want a proof or ErrClosed", r.err)
	default:
		pub, _ := w.Public()
		if err := groth16.Verify(r.p, vk, pub); err != nil {
			t.Errorf("gnark rejects the proof Prove returned during Close: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := e.Prove(context.Background(), "", w); !errors.Is(err, ErrClosed) {
		t.Errorf("Prove after Close: %v", err)
	}
}

// TestRunAgainAfterACancelledRunAndAStream: a Run ended by its context, and
// a Stream (Run over JSON lines), leave the engine ready for the next Run.
func TestRunAgainAfterACancelledRunAndAStream(t *testing.T) {
	c := loadChain(t)
	e, err := New(context.Background(), cpuOptions(t.TempDir()), c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	jobs := make(chan stream.Line, 1) // never closed: only ctx ends this Run
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "a1", Generate: &stream.Generate{Seed: 1}}}
	err = e.Run(ctx, jobs, func(stream.Result) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Run: %v", err)
	}
	in := strings.NewReader(`{"id":"b1","generate":{"seed":2}}` + "\n")
	var ok int
	count := func(r stream.Result) error {
		if r.Error != "" {
			t.Errorf("%s: %s", r.ID, r.Error)
		} else {
			ok++
		}
		return nil
	}
	if err := e.Stream(context.Background(), context.Background(), in, count); err != nil {
		t.Fatalf("Stream after a cancelled Run: %v", err)
	}
	if err := e.Run(context.Background(), generated("c", 2), count); err != nil {
		t.Fatalf("Run after a Stream: %v", err)
	}
	if ok != 3 {
		t.Errorf("%d jobs proved after the cancelled Run, want 3", ok)
	}
}
