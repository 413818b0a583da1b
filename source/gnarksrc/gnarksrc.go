// Package gnarksrc is the circuit source for gnark's own files: a circuit
// directory of circuit.r1cs, circuit.pk and circuit.vk in gnark's binary
// encodings, jobs with a gnark binary witness (or, for built-in circuits, a
// seed to generate one), and proofs in gnark's binary encoding that
// groth16.Verify accepts.
package gnarksrc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/constraint/solver"
	fcs "github.com/consensys/gnark/frontend/cs"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/evm"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/boundedread"
	"github.com/zkpipe/zkpipe/source/gnarksrc/solve"
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
}

// Source proves jobs for one gnark circuit.
type Source struct {
	ccs     *cs.R1CS
	pk      *groth16bn254.ProvingKey
	vk      *groth16bn254.VerifyingKey
	builtin *circuits.Builtin // nil unless the directory names one
	size    int
	commits constraint.Groth16Commitments
	opts    Options
	solve   []solver.Option // the user's hints, resolved once
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
	// the circuit's Solidity verifier (package evm), in hex.
	Calldata bool
	// Progress, when not nil, is told every ProgressEvery (0: never) how far
	// the load of each circuit file has got, and how long a load took once
	// it took longer than that: a 2^26 key is minutes of reading and
	// decompression, which should not look like a hang.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// state is what a job carries between this source's steps.
type state struct {
	full, public witness.Witness
	commitments  []bn254.G1Affine
	pok          bn254.G1Affine
}

func (s *Source) Kind() string { return "gnark" }

// HashToField is the hash of the circuit's commitment challenges.
func (s *Source) HashToField() HashToField { return s.opts.HashToField }

// VerifyingKey is the circuit's verifying key.
func (s *Source) VerifyingKey() *groth16bn254.VerifyingKey { return s.vk }

// LoadDir reads a circuit directory with the default Options; the circuit
// is named after it.
func LoadDir(dir string) (*stages.Circuit, error) { return LoadDirWith(dir, Options{}) }

// LoadDirWith reads a circuit directory; the circuit is named after it. The
// r1cs, keys and circuit.json are checked against each other (see
// checkKeys), and a mismatch refuses the circuit, naming the file.
func LoadDirWith(dir string, o Options) (*stages.Circuit, error) {
	name := filepath.Base(filepath.Clean(dir))
	ccs := groth16.NewCS(ecc.BN254)
	// the r1cs is decoded into memory: no larger than the machine's
	if err := readFile(filepath.Join(dir, R1CSFile), "constraint system", boundedread.MachineMemory(), o, checkR1CSLayout, ccs.ReadFrom); err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	pk := groth16.NewProvingKey(ecc.BN254)
	// UnsafeReadFrom skips the subgroup checks (minutes for large keys): a bad
	// proving key can only spoil its owner's proofs, which Emit's check
	// against the verifying key rejects before anything is written.
	if err := readFile(filepath.Join(dir, PKFile), "proving key of this r1cs", pkLimit(ccs), o, checkPKLayout, pk.UnsafeReadFrom); err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	vk := groth16.NewVerifyingKey(ecc.BN254)
	if err := readFile(filepath.Join(dir, VKFile), "verifying key", vkLimit, o, checkVKLayout(), vk.ReadFrom); err != nil {
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
	return NewWith(name, ccs, pk, vk, meta, o)
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
// encoding: m wires and n constraints give at most 3m+d G1 points (A, B, K;
// Z over the domain d ≤ 2(n+m)) of 64 bytes, m G2 points of 128, two
// infinity bytes a wire and commitment bases of at most 2m G1 points; a
// quarter more and 16 MiB for headers and slack.
func pkLimit(ccs constraint.ConstraintSystem) int64 {
	m := int64(ccs.GetNbInternalVariables() + ccs.GetNbSecretVariables() + ccs.GetNbPublicVariables())
	n := int64(ccs.GetNbConstraints())
	return (64*(5*m+2*(n+m))+128*m+2*m)*5/4 + 16<<20
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
// must be of one circuit and one setup (see checkKeys).
func NewWith(name string, ccsI constraint.ConstraintSystem, pkI groth16.ProvingKey, vkI groth16.VerifyingKey, meta *Meta, o Options) (*stages.Circuit, error) {
	registerStdHints()
	ccs, ok1 := ccsI.(*cs.R1CS)
	pk, ok2 := pkI.(*groth16bn254.ProvingKey)
	vk, ok3 := vkI.(*groth16bn254.VerifyingKey)
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("circuit %s: want a BN254 R1CS with Groth16 keys, got %T, %T, %T", name, ccsI, pkI, vkI)
	}
	htf, err := ParseHashToField(string(o.HashToField))
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	o.HashToField = htf
	src := &Source{ccs: ccs, pk: pk, vk: vk, commits: ccs.CommitmentInfo.(constraint.Groth16Commitments), opts: o}
	if len(o.Hints) > 0 {
		src.solve = []solver.Option{solver.WithHints(o.Hints...)}
	}
	if err := checkKeys(ccs, pk, vk, src.commits); err != nil {
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
		src.builtin, src.size = &b, meta.Constraints
	}

	nbWires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()

	c := &stages.Circuit{
		Name:        name,
		Constraints: ccs.GetNbConstraints(),
		NbWires:     nbWires,
		NbPublic:    ccs.GetNbPublicVariables(),
		Source:      src,
		Key: &proofdata.Key{
			Domain:      &pk.Domain,
			HConvention: proofdata.HDivideByZ,
			A:           pk.G1.A, B1: pk.G1.B, K: pk.G1.K, Z: pk.G1.Z,
			B2: pk.G2.B,
		},
		Alpha1: pk.G1.Alpha, Beta1: pk.G1.Beta, Delta1: pk.G1.Delta,
		Beta2: pk.G2.Beta, Delta2: pk.G2.Delta,
	}
	// A and B skip the wires whose bases are infinity, as gnark's prover does.
	for i := 0; i < nbWires; i++ {
		if !pk.InfinityA[i] {
			c.Sel.A = append(c.Sel.A, uint32(i))
		}
		if !pk.InfinityB[i] {
			c.Sel.B = append(c.Sel.B, uint32(i))
		}
	}
	// K starts after the public wires and skips the privately committed
	// wires and the commitment wires themselves (they are public to the
	// verifier), as gnark's setup lays out pk.G1.K.
	skip := make(map[int]bool)
	for _, w := range src.commits.CommitmentIndexes() {
		skip[w] = true
	}
	for _, ws := range src.commits.GetPrivateCommitted() {
		for _, w := range ws {
			skip[w] = true
		}
	}
	for i := c.NbPublic; i < nbWires; i++ {
		if !skip[i] {
			c.Sel.K = append(c.Sel.K, uint32(i))
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// ─── parse ───────────────────────────────────────────────────────────────────

// Parse takes the job's witness value (Job.WitnessValue), reads its binary
// witness file (from Job.WitnessInput when its bytes are in hand, with the same
// bounds), or generates one for a built-in circuit, and checks it has the
// circuit's public and secret counts. Job.WitnessInput is released, read or not.
func (s *Source) Parse(ctx context.Context, j *stages.Job) error {
	defer j.WitnessInput.Release()
	req := &j.Request
	if req.Wtns != "" || len(req.Input) > 0 {
		return fmt.Errorf("circuit %s is a gnark circuit: wtns and input jobs need a circom circuit (--zkey)", j.Circuit.Name)
	}
	var full witness.Witness
	switch {
	case j.WitnessValue != nil && (req.Witness != "" || req.Generate != nil):
		return fmt.Errorf("give a witness value, a witness file or generate, only one")
	case j.WitnessValue != nil:
		w, ok := j.WitnessValue.(witness.Witness)
		if !ok || w == nil {
			return fmt.Errorf("witness value is a %T, circuit %s wants a gnark witness.Witness", j.WitnessValue, j.Circuit.Name)
		}
		if _, ok := w.Vector().(fr.Vector); !ok {
			return fmt.Errorf("witness value is over another field (%T), circuit %s wants BN254's", w.Vector(), j.Circuit.Name)
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
		w, err := s.builtin.Witness(s.size, req.Generate.Seed)
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
	nbPub, nbAll := len(pub.Vector().(fr.Vector)), len(full.Vector().(fr.Vector))
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
	return witnessShape{circuit: name, public: s.ccs.GetNbPublicVariables() - 1, secret: s.ccs.GetNbSecretVariables()}
}

// ─── synthesize ──────────────────────────────────────────────────────────────

// Synthesize solves the R1CS (gnark's ccs.Solve) with the BSB22 commitment
// hint installed as gnark's prover installs it: each commitment is a Pedersen
// commitment to its privately committed wires, hashed with the public ones
// into the challenge wire by the circuit's hash-to-field (Options.HashToField). The proof of knowledge of the commitments is
// folded here too, while the committed values are at hand.
func (s *Source) Synthesize(_ context.Context, j *stages.Job) error {
	st := j.Source.(*state)
	pk := s.pk
	st.commitments = make([]bn254.G1Affine, len(s.commits))
	committed := make([][]fr.Element, len(s.commits))
	htf := s.opts.HashToField.New()

	bsb22 := solver.OverrideHint(solver.GetHintID(fcs.Bsb22CommitmentComputePlaceholder), func(_ *big.Int, in, out []*big.Int) error {
		i := int(in[0].Int64())
		in = in[1:]
		hashed := in[:len(s.commits[i].PublicAndCommitmentCommitted)]
		priv := in[len(hashed):]
		committed[i] = make([]fr.Element, len(s.commits[i].PrivateCommitted))
		for k := range priv {
			committed[i][k].SetBigInt(priv[k])
		}
		var err error
		if st.commitments[i], err = pk.CommitmentKeys[i].Commit(committed[i]); err != nil {
			return err
		}
		htf.Write(constraint.SerializeCommitment(st.commitments[i].Marshal(), hashed, (fr.Bits-1)/8+1))
		sum := htf.Sum(nil)
		htf.Reset()
		var res fr.Element
		res.SetBytes(sum[:min(fr.Bytes, htf.Size())])
		res.BigInt(out[0])
		return nil
	})

	// gnark's solver, writing into vectors from the engine's pools (package
	// solve): W, a, b, c stay with the job, the flags only for the solve.
	wires, m := solve.Lengths(s.ccs)
	j.TakeVectors(wires, m)
	solved := j.TakeFlags(wires)
	err := solve.Solve(s.ccs, st.full.Vector().(fr.Vector), solve.Buffers{W: j.W, Solved: solved, A: j.Vec.A, B: j.Vec.B, C: j.Vec.C},
		append([]solver.Option{bsb22}, s.solve...)...)
	j.PutFlags(solved)
	if err != nil {
		return fmt.Errorf("unsatisfied witness: %w", err)
	}

	if len(s.commits) > 0 {
		poks := make([]bn254.G1Affine, len(s.commits))
		for i := range pk.CommitmentKeys {
			if poks[i], err = pk.CommitmentKeys[i].ProveKnowledge(committed[i]); err != nil {
				return fmt.Errorf("commitment %d: proof of knowledge: %w", i, err)
			}
		}
		// fold the proofs of knowledge with a challenge from the commitment wires
		ser := make([]byte, fr.Bytes*len(s.commits))
		for i := range s.commits {
			copy(ser[fr.Bytes*i:], j.W[s.commits[i].CommitmentIndex].Marshal())
		}
		ch, err := fr.Hash(ser, []byte("G16-BSB22"), 1)
		if err != nil {
			return err
		}
		if _, err := st.pok.Fold(poks, ch[0], ecc.MultiExpConfig{NbTasks: 1}); err != nil {
			return err
		}
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
	proof := &groth16bn254.Proof{Ar: p.Ar, Bs: p.Bs, Krs: p.Krs, Commitments: st.commitments, CommitmentPok: st.pok}
	if !s.opts.SkipVerify || j.Verify {
		if err := groth16bn254.Verify(proof, s.vk, st.public.Vector().(fr.Vector), s.opts.HashToField.VerifierOption()); err != nil {
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
	js, err := json.Marshal(ProofJSON(proof))
	if err != nil {
		return stages.Emitted{}, err
	}
	em := stages.Emitted{Value: proof}
	// The binary proof goes last: its presence marks the job as done.
	if em.Public, err = out.Write(j.ID+".public", pub); err != nil {
		return em, err
	}
	if _, err = out.Write(j.ID+".proof.json", js); err != nil {
		return em, err
	}
	if s.opts.Calldata {
		if em.Calldata, err = out.Write(j.ID+".calldata", evm.CalldataHex(proof, st.public.Vector().(fr.Vector))); err != nil {
			return em, err
		}
	}
	if em.Proof, err = out.Write(j.ID+".proof", buf.Bytes()); err != nil {
		return em, err
	}
	for _, v := range st.public.Vector().(fr.Vector) {
		em.PublicInputs = append(em.PublicInputs, decimal(&v))
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

// ProofJSON returns p's JSON form.
func ProofJSON(p *groth16bn254.Proof) JSONProof {
	g1 := func(a *bn254.G1Affine) [3]string { return [3]string{decimal(&a.X), decimal(&a.Y), "1"} }
	out := JSONProof{Protocol: "groth16", Curve: "bn128", A: g1(&p.Ar), C: g1(&p.Krs),
		B: [3][2]string{{decimal(&p.Bs.X.A0), decimal(&p.Bs.X.A1)}, {decimal(&p.Bs.Y.A0), decimal(&p.Bs.Y.A1)}, {"1", "0"}}}
	for i := range p.Commitments {
		out.Commitments = append(out.Commitments, g1(&p.Commitments[i]))
	}
	if len(p.Commitments) > 0 {
		pok := g1(&p.CommitmentPok)
		out.CommitmentPok = &pok
	}
	return out
}

// R1CS is the circuit's constraint system, for gnark's own prover in benchmarks.
func (s *Source) R1CS() constraint.ConstraintSystem { return s.ccs }

// ProvingKey is the circuit's gnark proving key.
func (s *Source) ProvingKey() groth16.ProvingKey { return s.pk }

// Witness generates a built-in circuit's full witness from seed.
func (s *Source) Witness(seed int64) (witness.Witness, error) {
	if s.builtin == nil {
		return nil, fmt.Errorf("not a built-in circuit: cannot generate witnesses")
	}
	return s.builtin.Witness(s.size, seed)
}
