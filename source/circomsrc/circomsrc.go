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
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// Source proves jobs for one circom circuit.
type Source struct {
	cc   circomCurve // the zkey's curve's half
	zkey *Zkey
	calc *Calculator // nil without a witness calculator: wtns jobs only
	r1cs *R1CS       // nil without one: unsatisfied witnesses are caught in emit
	vk   *VerifyingKey

	readTimeout time.Duration
}

// state is what a job carries from parse to emit.
type state struct {
	w      []proofdata.Scalar // from a .wtns; nil for an input job until synthesize
	input  json.RawMessage    // an input job's inputs
	public []proofdata.Scalar // wires 1 … nPublic, kept for emit (W is dropped after transfer)
}

func (s *Source) Kind() string { return "circom" }

// SerialSynthesis: Synthesize runs on one core a job (the witness
// calculator, then a and b), so the auto shape gives it more workers.
func (s *Source) SerialSynthesis() bool { return true }

// Curve is the circuit's curve: its zkey's.
func (s *Source) Curve() curve.ID { return s.zkey.Curve }

// Zkey is the circuit's proving key without its point sections (they live
// in the circuit's proofdata.Key, filtered): header, IC and coefficients,
// the coefficients' rows in gnark-crypto's domain order (snarkjsPower: for
// BLS12-381 not the file's).
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
	// ReadKeyWhole reads the zkey's point sections at LoadFiles, into the
	// circuit's key on the host. Without it, a zkey that is a regular file
	// keeps them there: LoadFiles reads its header, IC and coefficients and
	// notes which points are infinity; the bases are read when a backend
	// loads the circuit, straight to a GPU's memory, never whole on the
	// host (zkeydefer.go). A bad point then fails the engine's load of the
	// circuit rather than LoadFiles, with the same error, and the file must
	// stay unchanged until then.
	ReadKeyWhole bool
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
	z, err := loadZkey(ctx, f.Zkey, f)
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
// optional constraint system, which must all be of one circuit and curve.
func New(name string, z *Zkey, calc *Calculator, r1cs *R1CS) (*stages.Circuit, error) {
	if calc != nil && calc.Curve() != z.Curve {
		return nil, fmt.Errorf("circuit %s: the wasm computes a %s witness (its prime is %s's r), the zkey is %s's: not of one curve (circom --prime and the powers of tau must agree)",
			name, calc.Curve(), calc.Curve(), z.Curve)
	}
	if calc != nil && calc.WitnessSize() != z.NVars {
		return nil, fmt.Errorf("circuit %s: the wasm computes %d wires, the zkey has %d: they are not of one circuit", name, calc.WitnessSize(), z.NVars)
	}
	if r1cs != nil && r1cs.Curve != z.Curve {
		return nil, fmt.Errorf("circuit %s: the r1cs is over %s's field, the zkey is %s's: not of one curve", name, r1cs.Curve, z.Curve)
	}
	if r1cs != nil {
		m := len(r1cs.Constraints)
		if r1cs.NWires != z.NVars || r1cs.NPublic() != z.NPublic || m+z.NPublic+1 != z.NbRows {
			return nil, fmt.Errorf("circuit %s: the r1cs (%d wires, %d public, %d constraints) and the zkey (%d wires, %d public, %d rows) are not of one circuit",
				name, r1cs.NWires, r1cs.NPublic(), m, z.NVars, z.NPublic, z.NbRows)
		}
	}
	cc := curveOf(z.Curve)
	c := &stages.Circuit{
		Name:        name,
		Constraints: z.NbRows,
		NbWires:     z.NVars,
		NbPublic:    z.NPublic + 1,
	}
	rowMul, err := cc.build(name, z, c)
	if err != nil {
		return nil, err
	}
	// The source keeps the zkey less its point sections: Key holds them,
	// filtered, and the unfiltered ones would double the key's memory.
	trimmed := *z
	cc.trim(&trimmed)
	trimmed.def = nil // the key's deferral holds it
	if rowMul != 1 {
		// snarkjs's row i is row K·i of gnark-crypto's domain (snarkjsPower);
		// new slices: z is the caller's
		for m := range trimmed.Coefs {
			co := &trimmed.Coefs[m]
			rows := make([]uint32, len(co.Row))
			for k, row := range co.Row {
				rows[k] = uint32(uint64(row) * rowMul % uint64(z.DomainSize))
			}
			co.Row = rows
		}
	}
	c.Source = &Source{cc: cc, zkey: &trimmed, calc: calc, r1cs: r1cs, vk: cc.vk(z)}
	if calc != nil {
		c.SynthesisBytes = calc.JobBytes()
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// keep returns the points of ps whose twin in mask is not infinity (inf),
// in a slice of their exact size (ps itself when none is), and their
// wires, first + index. Filtering by append would leave up to twice the
// key's memory in spare capacity.
func keep[P, M any](ps []P, first uint32, mask []M, inf func(*M) bool) ([]P, []uint32) {
	n := 0
	for i := range mask {
		if !inf(&mask[i]) {
			n++
		}
	}
	out, sel := ps, make([]uint32, 0, n)
	if n < len(ps) {
		out = make([]P, 0, n)
	}
	for i := range mask {
		if inf(&mask[i]) {
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

// Parse takes the job's witness value (Job.WitnessInput, a blob.Value: its
// wires), reads its .wtns (from Job.WitnessInput when its bytes are in hand,
// with the same bound) and checks it is for this circuit, or checks an
// input job's inputs are a JSON object (the witness is computed in
// synthesize, off the parse stage). Job.WitnessInput is released, read or not.
func (s *Source) Parse(ctx context.Context, j *stages.Job) error {
	defer j.WitnessInput.Release()
	req, name := &j.Request, j.Circuit.Name
	if req.Witness != "" || req.Generate != nil {
		return fmt.Errorf("circuit %s is a circom circuit: give wtns or input, not witness or generate", name)
	}
	value, isValue := j.WitnessInput.Value()
	switch {
	case isValue && (req.Wtns != "" || len(req.Input) > 0):
		return fmt.Errorf("give a witness value, wtns or input, only one")
	case isValue:
		w, ok := s.cc.witnessValue(value)
		if !ok {
			return fmt.Errorf("witness value is a %s, circuit %s (%s) wants its wires as %s's []fr.Element (ParseWtnsOf)", typeName(value), name, s.zkey.Curve, s.zkey.Curve)
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
		id, w, err := ParseWtnsOf(data)
		if err != nil {
			return fmt.Errorf("%s: %w", req.Wtns, err)
		}
		if id != s.zkey.Curve {
			// the stage's error names the job
			return fmt.Errorf("%s is a %s witness (its prime is %s's r), circuit %s is %s's: a witness of another curve",
				req.Wtns, id, id, name, s.zkey.Curve)
		}
		if len(w) != s.zkey.NVars {
			return fmt.Errorf("%s: witness of %d wires for circuit %s of %d: a witness for another circuit", req.Wtns, len(w), name, s.zkey.NVars)
		}
		j.Source = &state{w: w}
	case len(req.Input) > 0:
		if s.calc == nil {
			return fmt.Errorf("an input job needs the circuit's witness calculator: give circomsrc.Files.Wasm (its witness calculator) for circuit %s", name)
		}
		if _, err := flattenInput(req.Input, s.cc.r()); err != nil {
			return err
		}
		j.Source = &state{input: req.Input}
	default:
		return fmt.Errorf("job has neither wtns nor input")
	}
	return nil
}

// typeName is v's type with its package's path (a []fr.Element of which
// curve's fr).
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "nil"
	}
	if t.Kind() == reflect.Slice && t.Elem().PkgPath() != "" {
		return "[]" + t.Elem().PkgPath() + "." + t.Elem().Name()
	}
	return t.String()
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
	w := j.W // Montgomery form of the zkey's Fr, as the wtns and the calculator give it
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
	if err := s.cc.abc(ctx, &s.zkey.Coefs, w, j.Vec.A, j.Vec.B, j.Vec.C); err != nil {
		return err
	}
	st.public = append([]proofdata.Scalar(nil), w[1:1+s.zkey.NPublic]...)
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
	proof, err := s.cc.proof(p)
	if err != nil {
		return em, err
	}
	em.PublicInputs = s.cc.decimals(public)
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
	if em.Public, err = out.Write(j.ID+publicSuffix, pub); err != nil {
		return em, err
	}
	if em.Proof, err = out.Write(j.ID+proofSuffix, pj); err != nil {
		return em, err
	}
	em.Value = proof
	return em, nil
}

// checkWritten verifies the proof.json and public.json bytes about to be
// written, read back as ReadProof and ReadPublic (and snarkjs) read them.
func (s *Source) checkWritten(j *stages.Job, proof *Proof, public []proofdata.Scalar, pj, pub []byte) error {
	back, err := parseProof(j.ID+proofSuffix, pj, s.zkey.Curve)
	if err != nil {
		return fmt.Errorf("the proof as written would not read back: %w; nothing written", err)
	}
	backPub, err := parsePublic(j.ID+publicSuffix, pub, s.zkey.Curve)
	if err != nil {
		return fmt.Errorf("the public inputs as written would not read back: %w; nothing written", err)
	}
	if err := s.vk.Verify(back, backPub); err != nil {
		if !s.cc.equal(back, proof) || !slices.Equal(backPub, public) {
			return fmt.Errorf("the proof files as written fail the zkey's verifying key (%v); nothing written", err)
		}
		return fmt.Errorf("the witness does not satisfy circuit %s (its proof fails the zkey's verifying key); nothing written", j.Circuit.Name)
	}
	return nil
}

// Proof is a Groth16 proof of a circom circuit: Points is a
// *ProofPoints[G1, G2] of its curve's types (PointsOf).
type Proof struct {
	Curve  curve.ID
	Points any
}

// Close frees the witness calculator, if any.
func (s *Source) Close(ctx context.Context) error {
	if s.calc == nil {
		return nil
	}
	return s.calc.Close(ctx)
}
