// Package circomsrc is the circuit source for circom circuits and snarkjs's
// files: a Groth16 proving key (.zkey), jobs with a witness (.wtns) or with
// the circuit's inputs and its witness calculator (circuit.wasm, run in Go on
// wazero), and proofs in snarkjs's JSON that `snarkjs groth16 verify`
// accepts.
//
// It differs from gnark's source in parse and synthesize and in h: the zkey
// holds A and B as coefficients (c = a∘b), and its H points are the odd
// Lagrange bases of the 2n domain, so the key asks the backend for
// gpu.HOddCoset. From pin/transfer on, the stages are the same.
package circomsrc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/boundedread"
	"github.com/zkpipe/zkpipe/stages"
)

// Source proves jobs for one circom circuit.
type Source struct {
	zkey *Zkey
	calc *Calculator // nil without a witness calculator: wtns jobs only
	r1cs *R1CS       // nil without one: unsatisfied witnesses are caught in emit
	vk   *VerifyingKey

	readTimeout time.Duration
}

// state is what a job carries from parse to emit.
type state struct {
	w      []fr.Element    // from a .wtns; nil for an input job until synthesize
	input  json.RawMessage // an input job's inputs
	public []fr.Element    // wires 1 … nPublic, kept for emit (W is dropped after transfer)
}

func (s *Source) Kind() string { return "circom" }

// SerialSynthesis: Synthesize runs on one core a job (the witness
// calculator, then a and b), so the auto shape gives it more workers.
func (s *Source) SerialSynthesis() bool { return true }

// Zkey is the circuit's proving key without its point sections (they live
// in the circuit's proofdata.Key, filtered): header, IC and coefficients.
func (s *Source) Zkey() *Zkey { return s.zkey }

// VerifyingKey is the verifying key the zkey holds.
func (s *Source) VerifyingKey() *VerifyingKey { return s.vk }

// Files are a circom circuit's files: the zkey, and optionally its witness
// calculator (for input jobs) and its constraint system (to reject an
// unsatisfied witness in synthesize, before the MSMs, rather than in emit).
type Files struct {
	Zkey, Wasm, R1CS string
	// ReadTimeout bounds the read of one job's .wtns, from open to the last
	// byte (a FIFO nobody writes to, a stalled mount); 0 means
	// boundedread.DefaultTimeout.
	ReadTimeout time.Duration
	// LoadTimeout bounds reading each of these files (a FIFO nobody writes
	// to, a stalled mount); a regular file gets a second more for each
	// 32 MiB. 0 means boundedread.DefaultTimeout.
	LoadTimeout time.Duration
	// Wasm bounds the witness calculator: each job's calculation and each
	// call at load under Wasm.Timeout, each instance's memory under
	// Wasm.Memory (counted in every input job's memory reservation). Zero
	// values mean DefaultWasmTimeout and DefaultWasmMemory.
	WasmLimits Limits
}

// Bounds on reading a circuit's files: the slowest disk given time for, on
// top of LoadTimeout (a 20 GB zkey in some ten minutes), and the largest
// witness calculator (circom's wasm for millions of constraints is some
// hundred MB).
const (
	loadRate  = 32 << 20
	wasmLimit = 1 << 30
)

// readWhole reads a circuit file into memory under boundedread: a FIFO
// nobody writes to fails after o.LoadTimeout, /dev/zero and its like are
// refused, and a file over limit is refused by its size unread.
func readWhole(ctx context.Context, path, what string, limit int64, o Files) ([]byte, error) {
	return boundedread.ReadLimited(ctx, path, what, limit, boundedread.Options{Timeout: o.LoadTimeout, MinRate: loadRate}, io.ReadAll)
}

// Load reads a .zkey and, if wasmPath is not empty, the circuit's witness
// calculator; the circuit is named after the zkey's file name, less its
// extension.
func Load(ctx context.Context, zkeyPath, wasmPath string) (*stages.Circuit, error) {
	return LoadFiles(ctx, Files{Zkey: zkeyPath, Wasm: wasmPath})
}

// LoadFiles reads a circuit's files; the circuit is named after the zkey's
// file name, less its extension.
func LoadFiles(ctx context.Context, f Files) (*stages.Circuit, error) {
	name := strings.TrimSuffix(filepath.Base(f.Zkey), filepath.Ext(f.Zkey))
	z, err := readZkeyFile(ctx, f.Zkey, f)
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	var r1cs *R1CS
	if f.R1CS != "" {
		if r1cs, err = readR1CSFile(ctx, f.R1CS, f); err != nil {
			return nil, fmt.Errorf("circuit %s: %w", name, err)
		}
	}
	var calc *Calculator
	if f.Wasm != "" {
		code, err := readWhole(ctx, f.Wasm, "witness calculator (wasm)", wasmLimit, f)
		if err != nil {
			return nil, fmt.Errorf("circuit %s: %w", name, err)
		}
		if calc, err = NewCalculatorWith(ctx, code, f.WasmLimits); err != nil {
			return nil, fmt.Errorf("circuit %s: %s: %w", name, f.Wasm, err)
		}
	}
	c, err := New(name, z, calc, r1cs)
	if err != nil {
		if calc != nil {
			calc.Close(ctx)
		}
		return nil, err
	}
	c.Source.(*Source).readTimeout = f.ReadTimeout
	return c, nil
}

// New builds a circuit from a parsed zkey, an optional calculator and an
// optional constraint system, which must all be of one circuit.
func New(name string, z *Zkey, calc *Calculator, r1cs *R1CS) (*stages.Circuit, error) {
	if calc != nil && calc.WitnessSize() != z.NVars {
		return nil, fmt.Errorf("circuit %s: the wasm computes %d wires, the zkey has %d: they are not of one circuit", name, calc.WitnessSize(), z.NVars)
	}
	if r1cs != nil {
		m := len(r1cs.Constraints)
		if r1cs.NWires != z.NVars || r1cs.NPublic() != z.NPublic || m+z.NPublic+1 != z.NbRows {
			return nil, fmt.Errorf("circuit %s: the r1cs (%d wires, %d public, %d constraints) and the zkey (%d wires, %d public, %d rows) are not of one circuit",
				name, r1cs.NWires, r1cs.NPublic(), m, z.NVars, z.NPublic, z.NbRows)
		}
	}
	n := uint64(z.DomainSize)
	// h is evaluated on the coset ω₂ₙ·⟨ωₙ⟩; ωₙ must be snarkjs's, which is
	// ω₂ₙ² for both: gnark-crypto and snarkjs take powers of one 2²⁸-th root.
	w2n, err := fft.Generator(2 * n) // not NewDomain(2n): its tables would be twice the key's domain
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	dom := fft.NewDomain(n, fft.WithShift(w2n))
	var sq fr.Element
	if sq.Square(&w2n); !sq.Equal(&dom.Generator) {
		return nil, fmt.Errorf("circuit %s: ω₂ₙ² is not ωₙ in gnark-crypto's domains", name)
	}

	// The source keeps the zkey less its point sections: Key holds them,
	// filtered, and the unfiltered ones would double the key's memory.
	trimmed := *z
	trimmed.A, trimmed.B1, trimmed.B2, trimmed.C, trimmed.H = nil, nil, nil, nil, nil
	src := &Source{zkey: &trimmed, calc: calc, r1cs: r1cs, vk: &VerifyingKey{
		NPublic: z.NPublic, Alpha1: z.Alpha1, Beta2: z.Beta2, Gamma2: z.Gamma2, Delta2: z.Delta2, IC: z.IC,
	}}
	c := &stages.Circuit{
		Name:        name,
		Constraints: z.NbRows,
		NbWires:     z.NVars,
		NbPublic:    z.NPublic + 1,
		Source:      src,
	}
	// A, B₁/B₂ and K drop the wires whose bases are infinity (a wire absent
	// from the matrix): their terms are zero, and the MSMs need not see them.
	// K is the C section: the private wires nPublic+1 … nVars−1.
	k := &proofdata.Bases[bn254.G1Affine, bn254.G2Affine, fft.Domain]{Domain: dom, Z: z.H,
		Alpha1: z.Alpha1, Beta1: z.Beta1, Delta1: z.Delta1, Beta2: z.Beta2, Delta2: z.Delta2}
	for i := range z.B1 {
		if z.B1[i].IsInfinity() != z.B2[i].IsInfinity() {
			return nil, fmt.Errorf("circuit %s: zkey's B1 and B2 disagree on wire %d: one is infinity, the other not", name, i)
		}
	}
	k.A, c.Sel.A = keep(z.A, 0, z.A)
	k.B1, c.Sel.B = keep(z.B1, 0, z.B1)
	k.B2, _ = keep(z.B2, 0, z.B1)
	k.K, c.Sel.K = keep(z.C, uint32(z.NPublic+1), z.C)
	c.Key = proofdata.NewKey(curve.BN254, proofdata.HOddCoset, int(n), k)
	if calc != nil {
		c.SynthesisBytes = calc.JobBytes()
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// keep returns the points of ps whose twin in mask is not infinity, in a
// slice of their exact size (ps itself when none is), and their wires,
// first + index. Filtering by append would leave up to twice the key's
// memory in spare capacity.
func keep[P any](ps []P, first uint32, mask []bn254.G1Affine) ([]P, []uint32) {
	n := 0
	for i := range mask {
		if !mask[i].IsInfinity() {
			n++
		}
	}
	out, sel := ps, make([]uint32, 0, n)
	if n < len(ps) {
		out = make([]P, 0, n)
	}
	for i := range mask {
		if mask[i].IsInfinity() {
			continue
		}
		sel = append(sel, first+uint32(i))
		if n < len(ps) {
			out = append(out, ps[i])
		}
	}
	return out, sel
}

// ─── parse ───────────────────────────────────────────────────────────────────

// Parse reads a job's .wtns (from Job.WitnessInput when its bytes are in hand,
// with the same bound) and checks it is for this circuit, or checks an
// input job's inputs are a JSON object (the witness is computed in
// synthesize, off the parse stage). Job.WitnessInput is released, read or not.
func (s *Source) Parse(ctx context.Context, j *stages.Job) error {
	defer j.WitnessInput.Release()
	req, name := &j.Request, j.Circuit.Name
	if req.Witness != "" || req.Generate != nil {
		return fmt.Errorf("circuit %s is a circom circuit: give wtns or input, not witness or generate", name)
	}
	switch {
	case j.WitnessValue != nil && (req.Wtns != "" || len(req.Input) > 0):
		return fmt.Errorf("give a witness value, wtns or input, only one")
	case j.WitnessValue != nil:
		w, ok := j.WitnessValue.([]fr.Element)
		if !ok {
			return fmt.Errorf("witness value is a %T, circuit %s wants its wires as []fr.Element (ParseWtns)", j.WitnessValue, name)
		}
		if len(w) != s.zkey.NVars {
			return fmt.Errorf("witness of %d wires for circuit %s of %d: a witness for another circuit", len(w), name, s.zkey.NVars)
		}
		// a copy: the caller's slice is the caller's, while the job runs and after
		j.Source = &state{w: slices.Clone(w)}
	case req.Wtns != "" && len(req.Input) > 0:
		return fmt.Errorf("give wtns or input, not both")
	case j.WitnessInput != nil && req.Wtns == "":
		return fmt.Errorf("witness bytes in hand (%s), but the job names no wtns", j.WitnessInput.Name())
	case req.Wtns != "":
		var data []byte
		var err error
		if j.WitnessInput != nil {
			data, err = inputAtMost(ctx, j.WitnessInput, wtnsSize(s.zkey.NVars)+4096)
		} else {
			data, err = readAtMost(ctx, req.Wtns, wtnsSize(s.zkey.NVars)+4096, s.readTimeout)
		}
		if err != nil {
			return fmt.Errorf("wtns: %w", err)
		}
		w, err := ParseWtns(data)
		if err != nil {
			return fmt.Errorf("%s: %w", req.Wtns, err)
		}
		if len(w) != s.zkey.NVars {
			return fmt.Errorf("%s: witness of %d wires for circuit %s of %d: a witness for another circuit", req.Wtns, len(w), name, s.zkey.NVars)
		}
		j.Source = &state{w: w}
	case len(req.Input) > 0:
		if s.calc == nil {
			return fmt.Errorf("an input job needs the circuit's witness calculator: give --wasm for circuit %s", name)
		}
		if _, err := flattenInput(req.Input); err != nil {
			return err
		}
		j.Source = &state{input: req.Input}
	default:
		return fmt.Errorf("job has neither wtns nor input")
	}
	return nil
}

// wtnsSize is the size of a .wtns of n values: the container header, the
// header section (n8, the prime, the count) and the values section.
func wtnsSize(n int) int64 { return 12 + (12 + 4 + 32 + 4) + (12 + 32*int64(n)) }

// inputAtMost is readAtMost for a file's bytes as a value (in hand, or
// fetched now under ctx).
func inputAtMost(ctx context.Context, in *blob.Input, limit int64) ([]byte, error) {
	r, size, err := in.Open(ctx)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", in.Name(), err)
	case size > limit:
		return nil, fmt.Errorf("%s: more than %d bytes, far more than a witness of this circuit", in.Name(), limit)
	}
	return io.ReadAll(r)
}

// readAtMost reads a whole file of at most limit bytes: a job naming a huge
// file, or a device that never ends, fails at once instead of filling
// memory; a FIFO nobody writes to fails at the deadline or when ctx ends.
func readAtMost(ctx context.Context, path string, limit int64, timeout time.Duration) ([]byte, error) {
	return boundedread.Read(ctx, path, boundedread.Options{Timeout: timeout}, func(f *boundedread.File) ([]byte, error) {
		data, err := io.ReadAll(io.LimitReader(f, limit+1))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > limit {
			return nil, fmt.Errorf("%s: more than %d bytes, far more than a witness of this circuit", path, limit)
		}
		return data, nil
	})
}

// ─── synthesize ──────────────────────────────────────────────────────────────

// Synthesize computes an input job's witness, then the constraint
// evaluations as snarkjs's buildABC does:
//
//	a = A·W, b = B·W  from the zkey's coefficients (rows 0 … n−1)
//	c = a∘b           pointwise; the zkey has no C matrix
//
// c = a∘b holds by construction: with the circuit's r1cs, the witness is
// checked against its constraints first (about as costly as a and b);
// without, a wtns that does not satisfy the circuit is caught in emit, where
// the proof is checked before it is written.
func (s *Source) Synthesize(ctx context.Context, j *stages.Job) error {
	st := j.Source.(*state)
	// W, a, b, c from the engine's pools (fresh without them), contents
	// unspecified: the witness overwrites all of W, a and b are cleared
	// before they are summed into, c is written whole.
	n := s.zkey.DomainSize
	j.TakeVectors(s.zkey.NVars, n)
	w := proofdata.Elements[fr.Element](j.W) // BN254's Fr: circom's zkeys here are BN254's
	if st.w != nil {
		copy(w, st.w) // a .wtns job's, read at parse
	} else if err := s.calc.CalculateInto(ctx, st.input, w); err != nil {
		return err
	}
	st.w, st.input = nil, nil
	if s.r1cs != nil {
		if err := s.r1cs.Check(w); err != nil {
			return fmt.Errorf("unsatisfied witness: %w", err)
		}
	}
	a, b, c := proofdata.Elements[fr.Element](j.Vec.A), proofdata.Elements[fr.Element](j.Vec.B), proofdata.Elements[fr.Element](j.Vec.C)
	var t fr.Element
	for m, dst := range [2][]fr.Element{a, b} {
		clear(dst)
		co := &s.zkey.Coefs[m]
		for k, row := range co.Row {
			t.Mul(&co.Value[k], &w[co.Wire[k]])
			dst[row].Add(&dst[row], &t)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for i := range c {
		c[i].Mul(&a[i], &b[i])
	}
	st.public = append([]fr.Element(nil), w[1:1+s.zkey.NPublic]...)
	return nil
}

// ─── emit ────────────────────────────────────────────────────────────────────

// Emit writes ID.public.json and ID.proof.json in snarkjs's JSON, the proof
// last (its presence marks the job done), once the bytes to be written have
// passed the zkey's own verifying key as a verifier reads them: parsed back
// from that JSON, then four pairings (about a millisecond). So a witness
// that does not satisfy the circuit, or an encoding no verifier accepts,
// never becomes a proof file.
func (s *Source) Emit(_ context.Context, j *stages.Job, p *stages.Points, out stages.Output) (stages.Emitted, error) {
	var em stages.Emitted
	public := j.Source.(*state).public
	ar, ok1 := p.Ar.(*bn254.G1Affine)
	bs, ok2 := p.Bs.(*bn254.G2Affine)
	krs, ok3 := p.Krs.(*bn254.G1Affine)
	if !ok1 || !ok2 || !ok3 {
		return em, fmt.Errorf("emit: points %T, %T, %T are not BN254's", p.Ar, p.Bs, p.Krs)
	}
	proof := &Proof{A: *ar, B: *bs, C: *krs}
	em.PublicInputs = decimals(public)
	pub, err := json.Marshal(em.PublicInputs)
	if err != nil {
		return em, err
	}
	pj, err := json.Marshal(proof.JSON())
	if err != nil {
		return em, err
	}
	if err := s.checkWritten(j, proof, public, pj, pub); err != nil {
		return em, err
	}
	if em.Public, err = out.Write(j.ID+".public.json", pub); err != nil {
		return em, err
	}
	if em.Proof, err = out.Write(j.ID+".proof.json", pj); err != nil {
		return em, err
	}
	em.Value = proof
	return em, nil
}

// checkWritten verifies the proof.json and public.json bytes about to be
// written, read back as ReadProof and ReadPublic (and snarkjs) read them.
func (s *Source) checkWritten(j *stages.Job, proof *Proof, public []fr.Element, pj, pub []byte) error {
	back, err := parseProof(j.ID+".proof.json", pj)
	if err != nil {
		return fmt.Errorf("the proof as written would not read back: %w; nothing written", err)
	}
	backPub, err := parsePublic(j.ID+".public.json", pub)
	if err != nil {
		return fmt.Errorf("the public inputs as written would not read back: %w; nothing written", err)
	}
	if err := s.vk.Verify(back, backPub); err != nil {
		if *back != *proof || !slices.Equal(backPub, public) {
			return fmt.Errorf("the proof files as written fail the zkey's verifying key (%v); nothing written", err)
		}
		return fmt.Errorf("the witness does not satisfy circuit %s (its proof fails the zkey's verifying key); nothing written", j.Circuit.Name)
	}
	return nil
}

// Proof is a Groth16 proof: A = Ar, B = Bs, C = Krs.
type Proof struct {
	A, C bn254.G1Affine
	B    bn254.G2Affine
}

// Close frees the witness calculator, if any.
func (s *Source) Close(ctx context.Context) error {
	if s.calc == nil {
		return nil
	}
	return s.calc.Close(ctx)
}
