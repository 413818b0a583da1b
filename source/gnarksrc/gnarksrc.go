// Package gnarksrc is the circuit source for gnark's own files: a circuit
// directory of circuit.r1cs, circuit.pk and circuit.vk in gnark's binary
// encodings, jobs with a gnark binary witness (or, for built-in circuits, a
// seed to generate one), and proofs in gnark's binary encoding that
// groth16.Verify accepts. Circuits of every curve of package curve (the
// curve comes from the files); each curve's half of the source is
// curve_<curve>.go, generated from one template by internal/generator.
package gnarksrc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

// File names inside a circuit directory.
const (
	R1CSFile = "circuit.r1cs"
	PKFile   = "circuit.pk"
	VKFile   = "circuit.vk"
	MetaFile = "circuit.json" // optional: which built-in made the circuit, for generate jobs
)

// Meta describes a circuit made by zkpipe setup.
type Meta struct {
	Builtin     string `json:"builtin"`
	Constraints int    `json:"constraints"` // the size asked of the built-in
	// R1CSConstraints is the constraint count of the circuit.r1cs Setup
	// wrote, checked against it at load; 0 in directories of older zkpipes.
	R1CSConstraints int `json:"r1cs_constraints,omitempty"`
	// Curve is the circuit's curve ("bn254", "bls12-381"), for people
	// reading the file: zkpipe takes the curve from circuit.r1cs, and
	// refuses a circuit.json that names another. "" in directories of
	// older zkpipes (BN254's).
	Curve string `json:"curve,omitempty"`
}

// Source proves jobs for one gnark circuit.
type Source struct {
	curve   curve.ID
	g       gnarkCurve // the curve's half: typed ccs, pk, vk
	ccs     constraint.ConstraintSystem
	pk      groth16.ProvingKey
	vk      groth16.VerifyingKey
	builtin *circuits.Builtin // nil unless the directory names one
	size    int
	commits constraint.Groth16Commitments
	opts    Options
	solve   []solver.Option // the user's hints, resolved once
	key     *proofdata.Key  // the circuit's key, made of pk
}

// Options are a gnark circuit's settings beyond its files. The zero value
// is what a proving run wants.
type Options struct {
	// ReadTimeout bounds reading one job's witness file, from open to the
	// last byte (--read-timeout); 0 means boundedread.DefaultTimeout (30 s).
	// The job's context cancels a blocked read too.
	ReadTimeout time.Duration
	// SkipVerify writes proofs without first checking each against the
	// verifying key with gnark's groth16.Verify. For benchmarks only: a proof
	// that fails the check (wrong keys, a corrupted point) is then written
	// and reported proved.
	SkipVerify bool
	// LoadTimeout bounds reading each of the circuit's files (a FIFO nobody
	// writes to, a stalled mount); a regular file gets a second more for
	// each 32 MiB. 0 means boundedread.DefaultTimeout.
	LoadTimeout time.Duration
	// Hints are the circuit's own solver hints, given to ccs.Solve beside
	// gnark's standard ones (std.RegisterHints), which are always registered.
	Hints []solver.Hint
	// HashToField is the hash of the circuit's commitment challenges, for
	// New and NewWith ("" is gnark's default); LoadDirWith takes the
	// directory's hash-to-field file instead.
	HashToField HashToField
	// Calldata writes, beside each proof, ID.calldata: the proof's call of
	// the circuit's Solidity verifier (package evm), in hex. BN254 circuits
	// only (a Solidity verifier pairs on BN254's precompiles).
	Calldata bool
	// Progress, when not nil, is told every ProgressEvery (0: never) how far
	// the load of each circuit file has got, and how long a load took once
	// it took longer than that: a 2^26 key is minutes of reading and
	// decompression, which should not look like a hang.
	Progress      io.Writer
	ProgressEvery time.Duration
	// KeepProvingKey keeps pk's points whole when the engine drops the
	// circuit's host copy of its key once resident on a GPU
	// (proofdata.Key.Drop). Without it pk lets go of them too, so that no
	// second copy stays on the host (New's pk is then the circuit's: gnark's
	// prover can no longer prove with it). For a pk shared beyond this
	// circuit (tests' cached keys) or proven with after.
	KeepProvingKey bool
	// ReadKeyWhole reads the proving key's bases and the domain's tables at
	// LoadDirWith, as gnark does. Without it (unless KeepProvingKey) they
	// are read when a backend loads the circuit, from a key file that can
	// seek (a regular file): straight to a GPU's memory, never whole on the
	// host (pkdefer.go); a bad point then fails the engine's load of the
	// circuit rather than LoadDirWith, with the same error.
	ReadKeyWhole bool
	// SolveTasks is how many goroutines one witness solve spreads a level
	// of constraints over (gnark's solver.WithNbTasks); 0 means one per
	// core. Several solves at once each take that many, and that is the
	// better default: on the H100 host's 16 cores four porep solves at once
	// (2^24, BenchmarkSolvePorep) took 20 wall-ns a constraint with every
	// core each against 30 with a quarter each, for the same CPU (228 and
	// 218 ns): gnark's schedule waits at each level's end, and the other
	// solves' goroutines fill those waits (notes/seed27.md).
	SolveTasks int
}

// state is what a job carries between this source's steps.
type state struct {
	full, public witness.Witness
	curve        any // the curve half's: the commitments and their proof of knowledge
}

// gnarkCurve is a circuit's half in its curve's gnark types
// (curve_<curve>.go, one template for every curve).
type gnarkCurve interface {
	curve() curve.ID
	key() *proofdata.Key
	setDeferral(d *pkDeferral) // the parts LoadDir left unread
	infinity() (a, b []bool)   // pk.InfinityA, pk.InfinityB
	checkKeys(commits constraint.Groth16Commitments) error
	// vectorLen is how many values w holds; false when w is over
	// another curve's field.
	vectorLen(w witness.Witness) (int, bool)
	synthesize(j *stages.Job, st *state, commits constraint.Groth16Commitments, htf hash.Hash, opts []solver.Option) error
	proof(p *stages.Points, st *state) (groth16.Proof, error)
}

// gnarkCurveFuncs are a curve's entry points, by curve.ID (filled by the
// generated files' init).
type gnarkCurveFuncs struct {
	from      func(constraint.ConstraintSystem, groth16.ProvingKey, groth16.VerifyingKey) (gnarkCurve, bool)
	proofJSON func(groth16.Proof) (JSONProof, bool)
	nbPublic  func(groth16.VerifyingKey) (int, bool)
	// nbCommitments is how many BSB22 commitments the key's circuit has.
	nbCommitments func(groth16.VerifyingKey) (int, bool)
	defaultHash   func() hash.Hash // gnark's default hash-to-field over the curve's Fr
	// readPK decodes a proving key of the curve into pk, a fresh one
	// (readProvingKey, pkload.go).
	readPK func(r io.Reader, pk groth16.ProvingKey, def *pkDeferral, trusted bool) (int64, error)
	// compressed is gnark-crypto's isCompressed: whether a point whose
	// first byte is msb is in the compressed encoding (layout).
	compressed func(msb byte) bool
	// newR1CS is an empty R1CS of the curve, as groth16.NewCS makes it,
	// for readR1CS (r1csload.go).
	newR1CS func() r1csTarget
	// r1csParts is ccs's system, its coefficients' count and their
	// writer, for writeR1CS (r1cswrite.go); false for another curve's.
	r1csParts func(ccs constraint.ConstraintSystem) (sys *constraint.System, n int, writeCoeffs func(io.Writer) error, ok bool)
}

func (s *Source) Kind() string { return "gnark" }

// Curve is the circuit's curve.
func (s *Source) Curve() curve.ID { return s.curve }

// HashToField is the hash of the circuit's commitment challenges.
func (s *Source) HashToField() HashToField { return s.opts.HashToField }

// VerifyingKey is the circuit's verifying key (of its curve's gnark type:
// *groth16bn254.VerifyingKey for BN254).
func (s *Source) VerifyingKey() groth16.VerifyingKey { return s.vk }

// LoadDir reads a circuit directory with the default Options; the circuit
// is named after it.
func LoadDir(dir string) (*stages.Circuit, error) { return LoadDirWith(dir, Options{}) }

// LoadDirWith reads a circuit directory; the circuit is named after it. The
// r1cs, keys and circuit.json are checked against each other (see
// checkKeys), and a mismatch refuses the circuit, naming the file.
func LoadDirWith(dir string, o Options) (*stages.Circuit, error) {
	name := filepath.Base(filepath.Clean(dir))
	// The curve is the r1cs's (its serialised scalar field, read in the
	// layout check, before the decode); the keys are read as that curve's.
	var id curve.ID
	var ccs constraint.ConstraintSystem
	checkR1CS := func(r io.ReaderAt, size int64) (err error) {
		id, err = checkR1CSLayout(r, size)
		return err
	}
	// a regular file's sections are decoded over all cores (readR1CS,
	// r1csload.go); a pipe's by gnark's ReadFrom, as its bytes come
	readR1CSAt := func(r io.ReaderAt, size int64, read *atomic.Int64) (err error) {
		ccs, err = readR1CS(r, size, id, read)
		return err
	}
	readR1CSStream := func(r io.Reader) (int64, error) {
		ccs = groth16.NewCS(id.ECC())
		return ccs.ReadFrom(r)
	}
	// the r1cs is decoded into memory: no larger than the machine's
	if err := readFileAt(filepath.Join(dir, R1CSFile), "constraint system", boundedread.MachineMemory(), o, checkR1CS, readR1CSAt, readR1CSStream); err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	fp := id.Params().FpBytes
	pk := groth16.NewProvingKey(id.ECC())
	// readProvingKey decodes what gnark's UnsafeReadFrom decodes, the point
	// slices (raw or compressed) over all cores (pkload.go). Like
	// UnsafeReadFrom it skips the subgroup checks (minutes for large keys):
	// a bad proving key can only spoil its owner's proofs, which Emit's
	// check against the verifying key rejects before anything is written.
	pkPath := filepath.Join(dir, PKFile)
	var def *pkDeferral
	if !o.ReadKeyWhole && !o.KeepProvingKey {
		def = newPKDeferral(pkPath, o)
	}
	// the keys' layouts checked against what the r1cs says they hold
	shape, err := shapeOf(ccs)
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	// a key setup wrote and nobody changed since (its digest, PKDigestFile)
	// has its points in their subgroups: no check point by point
	trusted := pkTrusted(dir, o)
	if trusted && o.Progress != nil && o.ProgressEvery > 0 { // Options.Progress: 0 is never
		fmt.Fprintf(o.Progress, "zkpipe: %s has the digest setup wrote (%s): its points' subgroup checks skipped\n", pkPath, PKDigestFile)
	}
	if err := readFile(pkPath, "proving key of this r1cs", pkLimit(ccs, fp), o, checkPKLayout(id, shape), readProvingKey(id, pk, def, trusted)); err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	if def != nil && def.parts != 0 {
		if err := def.recordFile(); err != nil {
			return nil, fmt.Errorf("circuit %s: %w", name, err)
		}
	}
	vk := groth16.NewVerifyingKey(id.ECC())
	if err := readFile(filepath.Join(dir, VKFile), "verifying key", vkLimit, o, checkVKLayout(id, shape), vk.ReadFrom); err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	var meta *Meta
	b, err := boundedread.ReadLimited(context.Background(), filepath.Join(dir, MetaFile), MetaFile, metaLimit, o.load(), io.ReadAll)
	if err == nil {
		meta = new(Meta)
		if err := json.Unmarshal(b, meta); err != nil {
			return nil, fmt.Errorf("circuit %s: %s: %w", name, MetaFile, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	if o.HashToField, err = ReadHashToField(dir); err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	return newWith(name, ccs, pk, vk, meta, o, def)
}

// Bounds on a circuit directory's files, by what each can be: a verifying
// key is some 64 bytes a public input (64 MiB: a million of them), and
// circuit.json a few dozen bytes.
const (
	vkLimit   = 64 << 20
	metaLimit = 64 << 10
	// loadRate is the slowest disk a circuit file is given time for, on top
	// of Options.LoadTimeout: 32 MiB/s, a 20 GB key in some ten minutes.
	loadRate = 32 << 20
)

// pkLimit is the most a proving key of ccs can take in gnark's raw
// encoding, for a base field of fp bytes: m wires and n constraints give at
// most 3m+d G1 points (A, B, K; Z over the domain d ≤ 2(n+m)) of 2·fp
// bytes, m G2 points of 4·fp, two infinity bytes a wire and commitment
// bases of at most 2m G1 points; a quarter more and 16 MiB for headers and
// slack.
func pkLimit(ccs constraint.ConstraintSystem, fp int) int64 {
	m := int64(ccs.GetNbInternalVariables() + ccs.GetNbSecretVariables() + ccs.GetNbPublicVariables())
	n := int64(ccs.GetNbConstraints())
	g1, g2 := 2*int64(fp), 4*int64(fp)
	return (g1*(5*m+2*(n+m))+g2*m+2*m)*5/4 + 16<<20
}

func (o Options) load() boundedread.Options {
	return boundedread.Options{Timeout: o.LoadTimeout, MinRate: loadRate}
}

// New builds a circuit from gnark objects already in memory, with the
// default Options.
func New(name string, ccsI constraint.ConstraintSystem, pkI groth16.ProvingKey, vkI groth16.VerifyingKey, meta *Meta) (*stages.Circuit, error) {
	return NewWith(name, ccsI, pkI, vkI, meta, Options{})
}

// NewWith builds a circuit from gnark objects already in memory, which
// must be of one curve, one circuit and one setup (see checkKeys).
func NewWith(name string, ccs constraint.ConstraintSystem, pk groth16.ProvingKey, vk groth16.VerifyingKey, meta *Meta, o Options) (*stages.Circuit, error) {
	return newWith(name, ccs, pk, vk, meta, o, nil)
}

// newWith is NewWith for a pk of which def's parts are not read yet.
func newWith(name string, ccs constraint.ConstraintSystem, pk groth16.ProvingKey, vk groth16.VerifyingKey, meta *Meta, o Options, def *pkDeferral) (*stages.Circuit, error) {
	registerStdHints()
	var g gnarkCurve
	for _, f := range gnarkCurves {
		if f.from != nil {
			if h, ok := f.from(ccs, pk, vk); ok {
				g = h
				break
			}
		}
	}
	if g != nil && def != nil {
		g.setDeferral(def)
	}
	if g == nil {
		return nil, fmt.Errorf("circuit %s: want an R1CS with Groth16 keys, all of BN254 or all of BLS12-381, got %T, %T, %T", name, ccs, pk, vk)
	}
	htf, err := ParseHashToField(string(o.HashToField))
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	o.HashToField = htf
	if o.Calldata && g.curve() != curve.BN254 {
		return nil, fmt.Errorf("circuit %s: Solidity calldata needs a BN254 circuit (Ethereum's pairing precompiles), this one is %s", name, g.curve())
	}
	commits, ok := ccs.GetCommitments().(constraint.Groth16Commitments)
	if !ok {
		return nil, fmt.Errorf("circuit %s: commitments of a %T, not Groth16's", name, ccs.GetCommitments())
	}
	if o.Calldata && len(commits) > 0 && o.HashToField == HashDefault {
		// as export solidity refuses the contract
		return nil, defaultHashRefused(name, "its directory's "+HashFile, "calldata (--calldata) no contract would accept")
	}
	src := &Source{curve: g.curve(), g: g, ccs: ccs, pk: pk, vk: vk, commits: commits, opts: o}
	if len(o.Hints) > 0 {
		src.solve = []solver.Option{solver.WithHints(o.Hints...)}
	}
	if o.SolveTasks > 0 {
		src.solve = append(src.solve, solver.WithNbTasks(o.SolveTasks))
	}
	if err := checkKeys(g, src.commits); err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	if meta != nil {
		b, err := circuits.Lookup(meta.Builtin)
		if err != nil {
			return nil, fmt.Errorf("circuit %s: %s: %w", name, MetaFile, err)
		}
		if err := checkMeta(b, meta, ccs); err != nil {
			return nil, fmt.Errorf("circuit %s: %w", name, err)
		}
		if meta.Curve != "" {
			if id, err := curve.Parse(meta.Curve); err != nil || id != g.curve() {
				return nil, fmt.Errorf("circuit %s: %s says curve %q, %s is %s: not of one circuit", name, MetaFile, meta.Curve, R1CSFile, g.curve())
			}
		}
		src.builtin, src.size = &b, meta.Constraints
	}

	nbWires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()

	c := &stages.Circuit{
		Name:        name,
		Constraints: ccs.GetNbConstraints(),
		NbWires:     nbWires,
		NbPublic:    ccs.GetNbPublicVariables(),
		Source:      src,
		Key:         g.key(),
	}
	src.key = c.Key
	if o.KeepProvingKey {
		c.Key.OnDrop = nil // the key's own references go; pk's stay
	}
	// A and B skip the wires whose bases are infinity, as gnark's prover does.
	infA, infB := g.infinity()
	c.Sel.A = selectWires(0, nbWires, func(i int) bool { return !infA[i] })
	c.Sel.B = selectWires(0, nbWires, func(i int) bool { return !infB[i] })
	// K starts after the public wires and skips the privately committed
	// wires and the commitment wires themselves (they are public to the
	// verifier), as gnark's setup lays out pk.G1.K.
	var skip []bool
	mark := func(w int) {
		if skip == nil {
			skip = make([]bool, nbWires)
		}
		if w >= 0 && w < nbWires {
			skip[w] = true
		}
	}
	for _, w := range src.commits.CommitmentIndexes() {
		mark(w)
	}
	for _, ws := range src.commits.GetPrivateCommitted() {
		for _, w := range ws {
			mark(w)
		}
	}
	c.Sel.K = selectWires(c.NbPublic, nbWires, func(i int) bool { return skip == nil || !skip[i] })
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// selectWires is the wires i in [from, n) for which keep(i), in order
// (nil when none), over all cores: each range of wires counted, then
// written at its place (a 2^27 circuit's three selections were some 1.5 s
// of appends on one core).
func selectWires(from, n int, keep func(i int) bool) []uint32 {
	if from >= n {
		return nil
	}
	const span = 1 << 16
	ranges := (n - from + span - 1) / span
	at := make([]int, ranges+1)
	forRanges(ranges, 1, func(r, _ int) {
		k := 0
		for i := from + r*span; i < min(from+(r+1)*span, n); i++ {
			if keep(i) {
				k++
			}
		}
		at[r+1] = k
	})
	for r := range ranges {
		at[r+1] += at[r]
	}
	if at[ranges] == 0 {
		return nil
	}
	sel := make([]uint32, at[ranges])
	forRanges(ranges, 1, func(r, _ int) {
		k := at[r]
		for i := from + r*span; i < min(from+(r+1)*span, n); i++ {
			if keep(i) {
				sel[k] = uint32(i)
				k++
			}
		}
	})
	return sel
}

// ─── parse ───────────────────────────────────────────────────────────────────

// Parse takes the job's witness value (Job.WitnessInput, a blob.Value), reads
// its binary witness file (from Job.WitnessInput when its bytes are in hand,
// with the same bounds), or generates one for a built-in circuit, and checks
// it has the circuit's public and secret counts. Job.WitnessInput is
// released, read or not.
func (s *Source) Parse(ctx context.Context, j *stages.Job) error {
	defer j.WitnessInput.Release()
	req := &j.Request
	if req.Wtns != "" || len(req.Input) > 0 {
		return fmt.Errorf("circuit %s is a gnark circuit: wtns and input jobs need a circom circuit (circomsrc.Files.Zkey)", j.Circuit.Name)
	}
	var full witness.Witness
	value, isValue := j.WitnessInput.Value()
	switch {
	case isValue && (req.Witness != "" || req.Generate != nil):
		return fmt.Errorf("give a witness value, a witness file or generate, only one")
	case isValue:
		w, ok := value.(witness.Witness)
		if !ok || w == nil {
			return fmt.Errorf("witness value is a %T, circuit %s wants a gnark witness.Witness", value, j.Circuit.Name)
		}
		if _, ok := s.g.vectorLen(w); !ok {
			return fmt.Errorf("witness value is over another field (%T), circuit %s wants %s's", w.Vector(), j.Circuit.Name, s.curve)
		}
		full = w
	case req.Witness != "" && req.Generate != nil:
		return fmt.Errorf("give witness or generate, not both")
	case j.WitnessInput != nil && req.Witness == "":
		return fmt.Errorf("witness bytes in hand (%s), but the job names no witness", j.WitnessInput.Name())
	case j.WitnessInput != nil:
		w, err := readWitnessInput(ctx, j.WitnessInput, s.witnessShape(j.Circuit.Name))
		if err != nil {
			return fmt.Errorf("witness: %w", err)
		}
		full = w
	case req.Witness != "":
		w, err := readWitnessFile(ctx, req.Witness, s.witnessShape(j.Circuit.Name), boundedread.Options{Timeout: s.opts.ReadTimeout})
		if err != nil {
			return fmt.Errorf("witness: %w", err)
		}
		full = w
	case req.Generate != nil:
		if s.builtin == nil {
			return fmt.Errorf("circuit %s was not made by zkpipe setup from a built-in: it cannot generate witnesses", j.Circuit.Name)
		}
		w, err := s.builtin.WitnessOn(s.curve, s.size, req.Generate.Seed)
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		full = w
	default:
		return fmt.Errorf("job has neither witness nor generate")
	}

	pub, err := full.Public()
	if err != nil {
		return err
	}
	nbPub, _ := s.g.vectorLen(pub)
	nbAll, _ := s.g.vectorLen(full)
	wantPub, wantSecret := s.ccs.GetNbPublicVariables()-1, s.ccs.GetNbSecretVariables()
	if nbPub != wantPub || nbAll-nbPub != wantSecret {
		return fmt.Errorf("witness has %d public and %d secret values, circuit %s wants %d and %d",
			nbPub, nbAll-nbPub, j.Circuit.Name, wantPub, wantSecret)
	}
	j.Source = &state{full: full, public: pub}
	return nil
}

// witnessShape is the witness the circuit wants: its public values less the
// one wire, and its secret ones.
func (s *Source) witnessShape(name string) witnessShape {
	return witnessShape{circuit: name, curve: s.curve, public: s.ccs.GetNbPublicVariables() - 1, secret: s.ccs.GetNbSecretVariables()}
}

// ─── synthesize ──────────────────────────────────────────────────────────────

// Synthesize solves the R1CS (gnark's ccs.Solve) with the BSB22 commitment
// hint installed as gnark's prover installs it: each commitment is a Pedersen
// commitment to its privately committed wires, hashed with the public ones
// into the challenge wire by the circuit's hash-to-field (Options.HashToField). The proof of knowledge of the commitments is
// folded here too, while the committed values are at hand.
func (s *Source) Synthesize(_ context.Context, j *stages.Job) error {
	st := j.Source.(*state)
	if err := s.g.synthesize(j, st, s.commits, s.opts.HashToField.hashOn(s.curve), s.solve); err != nil {
		return err
	}
	st.full = nil
	return nil
}

// ─── emit ────────────────────────────────────────────────────────────────────

// Emit checks the proof against the circuit's verifying key with gnark's
// groth16.Verify (unless Options.SkipVerify; about 1.5 ms, see
// BenchmarkVerify: a proof no verifier accepts must never be written or
// reported proved), then writes ID.proof (gnark binary), ID.public (gnark
// binary public witness) and ID.proof.json (the same points in decimal,
// snarkjs's layout).
func (s *Source) Emit(_ context.Context, j *stages.Job, p *stages.Points, out stages.Output) (stages.Emitted, error) {
	st := j.Source.(*state)
	proof, err := s.g.proof(p, st)
	if err != nil {
		return stages.Emitted{}, err
	}
	if !s.opts.SkipVerify || j.Verify {
		if err := groth16.Verify(proof, s.vk, st.public, s.opts.HashToField.VerifierOption()); err != nil {
			return stages.Emitted{}, fmt.Errorf("the proof fails circuit %s's verifying key (%v); nothing written", j.Circuit.Name, err)
		}
	}
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		return stages.Emitted{}, err
	}
	pub, err := st.public.MarshalBinary()
	if err != nil {
		return stages.Emitted{}, err
	}
	pj, err := ProofJSON(proof)
	if err != nil {
		return stages.Emitted{}, err
	}
	js, err := json.Marshal(pj)
	if err != nil {
		return stages.Emitted{}, err
	}
	em := stages.Emitted{Value: proof}
	// The binary proof goes last: its presence marks the job as done.
	if em.Public, err = out.Write(j.ID+publicSuffix, pub); err != nil {
		return em, err
	}
	if _, err = out.Write(j.ID+jsonSuffix, js); err != nil {
		return em, err
	}
	if s.opts.Calldata {
		cd, err := calldataHex(proof, st.public)
		if err != nil {
			return em, err
		}
		if em.Calldata, err = out.Write(j.ID+calldataSuffix, cd); err != nil {
			return em, err
		}
	}
	if em.Proof, err = out.Write(j.ID+proofSuffix, buf.Bytes()); err != nil {
		return em, err
	}
	if em.PublicInputs, err = publicDecimals(st.public); err != nil {
		return em, err
	}
	return em, nil
}

// JSONProof is a gnark proof in decimal, laid out as snarkjs lays its own.
type JSONProof struct {
	Protocol      string       `json:"protocol"`
	Curve         string       `json:"curve"`
	A             [3]string    `json:"pi_a"`
	B             [3][2]string `json:"pi_b"`
	C             [3]string    `json:"pi_c"`
	Commitments   [][3]string  `json:"commitments,omitempty"`
	CommitmentPok *[3]string   `json:"commitment_pok,omitempty"`
}

// ProofJSON returns p's JSON form; p is a gnark proof of a curve of
// package curve (*groth16bn254.Proof, …).
func ProofJSON(p groth16.Proof) (JSONProof, error) {
	for _, f := range gnarkCurves {
		if f.proofJSON != nil {
			if out, ok := f.proofJSON(p); ok {
				return out, nil
			}
		}
	}
	return JSONProof{}, fmt.Errorf("proof json: a %T, not a gnark proof of %s", p, curve.Names("or"))
}

// NbPublicInputs is how many public inputs a proof of vk has: its public
// witness's values, less the commitments' (gnark's NbPublicWitness counts
// those too).
func NbPublicInputs(vk groth16.VerifyingKey) (int, error) {
	for _, f := range gnarkCurves {
		if f.nbPublic != nil {
			if n, ok := f.nbPublic(vk); ok {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("a %T, not a gnark verifying key of %s", vk, curve.Names("or"))
}

// NbCommitments is how many BSB22 commitments vk's circuit has (whose
// challenges its hash-to-field makes), vk of any curve of package curve.
func NbCommitments(vk groth16.VerifyingKey) (int, error) {
	for _, f := range gnarkCurves {
		if f.nbCommitments != nil {
			if n, ok := f.nbCommitments(vk); ok {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("a %T, not a gnark verifying key of %s", vk, curve.Names("or"))
}

// snarkjsCurve is the curve's name in snarkjs's JSON ("bn128", "bls12381").
func snarkjsCurve(id curve.ID) string {
	if id == curve.BN254 {
		return "bn128"
	}
	return strings.ReplaceAll(id.String(), "-", "")
}

// R1CS is the circuit's constraint system, for gnark's own prover in benchmarks.
func (s *Source) R1CS() constraint.ConstraintSystem { return s.ccs }

// ProvingKey is the circuit's gnark proving key. Its points are the
// circuit's key's: once an engine has made them resident on a GPU it drops
// the host copy (engine.MemoryOptions.KeepHostKeys or
// Options.KeepProvingKey keep it), and gnark's prover then has none to
// read; prove with gnark before, or keep them.
func (s *Source) ProvingKey() groth16.ProvingKey { return s.pk }

// WholeProvingKey is ProvingKey with the parts LoadDir left unread
// (Options.ReadKeyWhole) read into it first: what gnark's own prover
// needs. An error when they cannot be read, or once the engine has
// dropped them.
func (s *Source) WholeProvingKey() (groth16.ProvingKey, error) {
	if s.key != nil {
		if err := s.key.Need(proofdata.AllParts); err != nil {
			return nil, err
		}
	}
	return s.pk, nil
}

// Witness generates a built-in circuit's full witness from seed.
func (s *Source) Witness(seed int64) (witness.Witness, error) {
	if s.builtin == nil {
		return nil, fmt.Errorf("not a built-in circuit: cannot generate witnesses")
	}
	return s.builtin.WitnessOn(s.curve, s.size, seed)
}
