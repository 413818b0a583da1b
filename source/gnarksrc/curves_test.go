package gnarksrc_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// verifyWithGnark reads a proof and its public witness as gnark's own
// decoders of vk's curve read them and checks them with gnark's
// groth16.Verify (no zkpipe code between the files and the verifier).
func verifyWithGnark(t *testing.T, vk groth16.VerifyingKey, h gnarksrc.HashToField, r stream.Result) error {
	t.Helper()
	pb, err := os.ReadFile(r.Proof)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := os.ReadFile(r.Public)
	if err != nil {
		t.Fatal(err)
	}
	proof := groth16.NewProof(vk.CurveID())
	if _, err := proof.ReadFrom(bytes.NewReader(pb)); err != nil {
		return err
	}
	pub, err := witness.New(vk.CurveID().ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.UnmarshalBinary(wb); err != nil {
		return err
	}
	return groth16.Verify(proof, vk, pub, h.VerifierOption())
}

// Every built-in set up on BLS12-381 (zkpipe setup --curve bls12-381) loads
// as a BLS12-381 circuit, the curve read from its files, and proves on the
// CPU backend: gnark's groth16.Verify accepts each proof (mulchain: all
// MSM; bits: batch-addition; commit: a BSB22 commitment and its proof of
// knowledge, hashed by gnark's default hash-to-field over BLS12-381's Fr),
// the proof files are gnark's BLS12-381 encodings, and a proof checked
// against another job's public inputs is rejected.
func TestBLS12381BuiltinsProve(t *testing.T) {
	for _, name := range circuits.Names() {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			b, err := circuits.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gnarksrc.SetupOn(curve.BLS12_381, name, max(300, b.Min()), dir); err != nil {
				t.Fatal(err)
			}
			c, err := gnarksrc.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.Curve() != curve.BLS12_381 || c.Source.(*gnarksrc.Source).Curve() != curve.BLS12_381 {
				t.Fatalf("circuit's curve %s, want %s", c.Curve(), curve.BLS12_381)
			}
			out := t.TempDir()
			jobs := []*stages.Job{
				{Request: stream.Request{ID: "a", Generate: &stream.Generate{Seed: 1}}},
				{Request: stream.Request{ID: "b", Generate: &stream.Generate{Seed: 2}}},
			}
			res := provertest.Run(t, provertest.Config(out, 2, 2), []*stages.Circuit{c}, jobs, 2*time.Minute)
			if len(res) != 2 {
				t.Fatalf("%d results", len(res))
			}
			vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(dir, gnarksrc.VKFile))
			if err != nil {
				t.Fatal(err)
			}
			if vk.CurveID() != ecc.BLS12_381 {
				t.Fatalf("verifying key of %s", vk.CurveID())
			}
			byID := map[string]stream.Result{}
			for _, r := range res {
				if r.Error != "" {
					t.Fatalf("job %s: %s", r.ID, r.Error)
				}
				if err := verifyWithGnark(t, vk, gnarksrc.HashDefault, r); err != nil {
					t.Fatalf("job %s: gnark's groth16.Verify rejects the proof: %v", r.ID, err)
				}
				if err := gnarksrc.VerifyFiles(vk, r.Proof, r.Public); err != nil {
					t.Fatalf("job %s: %v", r.ID, err)
				}
				pb, _ := os.ReadFile(r.Proof)
				var p groth16bls12381.Proof
				if _, err := p.ReadFrom(bytes.NewReader(pb)); err != nil {
					t.Fatalf("job %s: not gnark's BLS12-381 proof encoding: %v", r.ID, err)
				}
				if name == "commit" && len(p.Commitments) != 1 {
					t.Fatalf("job %s: %d commitments in the proof, want 1", r.ID, len(p.Commitments))
				}
				js, _ := os.ReadFile(strings.TrimSuffix(r.Proof, ".proof") + ".proof.json")
				var j gnarksrc.JSONProof
				if err := json.Unmarshal(js, &j); err != nil || j.Curve != "bls12381" {
					t.Fatalf("job %s: proof.json curve %q (%v), want bls12381", r.ID, j.Curve, err)
				}
				byID[r.ID] = r
			}
			if byID["a"].PublicInputs[0] != byID["b"].PublicInputs[0] || name == "bits" {
				swapped := byID["a"]
				swapped.Public = byID["b"].Public
				if err := verifyWithGnark(t, vk, gnarksrc.HashDefault, swapped); err == nil {
					t.Fatal("gnark accepted a proof against another job's public inputs")
				}
			}
		})
	}
}

// One engine proves a stream mixing BN254 and BLS12-381 circuits: each
// job's proof is of its circuit's curve and gnark accepts it with that
// circuit's key; an unsatisfied witness, a BN254 witness given to a
// BLS12-381 circuit and a BLS12-381 witness given to a BN254 circuit each
// fail alone, with an error naming the circuit's curve, and the jobs after
// them are proved.
func TestMixedCurvesInOneStream(t *testing.T) {
	const n = 300
	bnKeys := provertest.Setup(t, "mulchain", n)
	blsKeys := provertest.SetupOn(t, curve.BLS12_381, "mulchain", n)
	commitKeys := provertest.SetupOn(t, curve.BLS12_381, "commit", n)
	bn, bls, blsCommit := bnKeys.Circuit(t, "bn"), blsKeys.Circuit(t, "bls"), commitKeys.Circuit(t, "blscommit")

	wdir := t.TempDir()
	write := func(name string, w witness.Witness) string {
		t.Helper()
		data, err := w.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(wdir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chain, _ := circuits.Lookup("mulchain")
	newWitness := func(id curve.ID, a frontend.Circuit) witness.Witness {
		t.Helper()
		w, err := frontend.NewWitness(a, id.ECC().ScalarField())
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	good := newWitness(curve.BLS12_381, chain.AssignmentOn(curve.BLS12_381, n, 7))
	bad := chain.AssignmentOn(curve.BLS12_381, n, 8).(*circuits.MulChain)
	bad.Y = new(big.Int).Add(bad.Y.(*big.Int), big.NewInt(1))
	bnWitness := newWitness(curve.BN254, chain.Assignment(n, 9))
	// a BLS12-381 witness with a value of BN254's r or more: refused at parse
	var blsWitness witness.Witness
	for seed := int64(10); blsWitness == nil; seed++ {
		a := chain.AssignmentOn(curve.BLS12_381, n, seed).(*circuits.MulChain)
		r := curve.BN254.ECC().ScalarField()
		if a.X.(*big.Int).Cmp(r) >= 0 || a.Y.(*big.Int).Cmp(r) >= 0 {
			blsWitness = newWitness(curve.BLS12_381, a)
		}
	}

	gen := func(id, circuit string, seed int64) *stages.Job {
		return &stages.Job{Request: stream.Request{ID: id, Circuit: circuit, Generate: &stream.Generate{Seed: seed}}}
	}
	file := func(id, circuit, path string) *stages.Job {
		return &stages.Job{Request: stream.Request{ID: id, Circuit: circuit, Witness: path}}
	}
	jobs := []*stages.Job{
		gen("bn-1", "bn", 1), gen("bls-1", "bls", 1), gen("commit-1", "blscommit", 1),
		file("bls-file", "bls", write("good", good)),
		file("unsatisfied", "bls", write("bad", newWitness(curve.BLS12_381, bad))),
		file("bn-for-bls", "bls", write("bn", bnWitness)),
		file("bls-for-bn", "bn", write("bls", blsWitness)),
		gen("bn-2", "bn", 2), gen("bls-2", "bls", 2), gen("commit-2", "blscommit", 2),
	}
	out := t.TempDir()
	res := provertest.Run(t, provertest.Config(out, 2, 2), []*stages.Circuit{bn, bls, blsCommit}, jobs, 3*time.Minute)
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	vks := map[string]groth16.VerifyingKey{"bn": bnKeys.VK, "bls": blsKeys.VK, "blscommit": commitKeys.VK}
	fails := map[string]struct{ stage, want string }{
		"unsatisfied": {stages.Synthesize, "bls12-381"},
		"bn-for-bls":  {stages.Synthesize, "bls12-381"},
		"bls-for-bn":  {stages.Parse, "not below bn254's scalar field modulus"},
	}
	for _, r := range res {
		if f, ok := fails[r.ID]; ok {
			if r.Error == "" || r.FailedStage != f.stage || !strings.Contains(r.Error, f.want) {
				t.Errorf("job %s: failed in %q with %q, want a failure in %s naming %q", r.ID, r.FailedStage, r.Error, f.stage, f.want)
			}
			continue
		}
		if r.Error != "" {
			t.Errorf("job %s: %s", r.ID, r.Error)
			continue
		}
		vk := vks[r.Circuit]
		if err := verifyWithGnark(t, vk, gnarksrc.HashDefault, r); err != nil {
			t.Errorf("job %s (%s): gnark rejects the proof: %v", r.ID, r.Circuit, err)
		}
		other := vks["bn"]
		if r.Circuit == "bn" {
			other = vks["bls"]
		}
		if verifyWithGnark(t, other, gnarksrc.HashDefault, r) == nil {
			t.Errorf("job %s (%s): accepted by the other curve's key", r.ID, r.Circuit)
		}
	}
}

// A witness value of the other curve's field (engine.Prove's) is refused
// at parse by its type, naming the circuit's curve.
func TestWitnessValueOfAnotherCurveIsRefused(t *testing.T) {
	bls := provertest.SetupOn(t, curve.BLS12_381, "mulchain", 64).Circuit(t, "bls")
	bn := provertest.Setup(t, "mulchain", 64).Circuit(t, "bn")
	chain, _ := circuits.Lookup("mulchain")
	for _, c := range []struct {
		circuit *stages.Circuit
		other   curve.ID
	}{{bls, curve.BN254}, {bn, curve.BLS12_381}} {
		w, err := chain.WitnessOn(c.other, 64, 1)
		if err != nil {
			t.Fatal(err)
		}
		j := &stages.Job{Circuit: c.circuit, WitnessInput: blob.Value("its witness value", w)}
		err = c.circuit.Source.Parse(t.Context(), j)
		if err == nil || !strings.Contains(err.Error(), "over another field") || !strings.Contains(err.Error(), c.circuit.Curve().String()) {
			t.Errorf("circuit %s: a %s witness value: %v", c.circuit.Curve(), c.other, err)
		}
	}
}

// A circuit of gnark's std gadgets (emulated secp256k1 arithmetic and a
// range check: BSB22 commitments to lookup tables), compiled and set up by
// gnark over BLS12-381 as a user's program would, loads from its directory
// and proves; gnark accepts the proof.
func TestBLS12381StdGadgetsProve(t *testing.T) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &emulatedGadgets{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ccs.GetCommitments().CommitmentIndexes()) == 0 {
		t.Fatal("the std gadgets made no commitment")
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "emu")
	os.MkdirAll(dir, 0o755)
	writeTo := func(name string, wt func(b *bytes.Buffer) error) {
		var b bytes.Buffer
		if err := wt(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTo(gnarksrc.R1CSFile, func(b *bytes.Buffer) error { _, err := ccs.WriteTo(b); return err })
	writeTo(gnarksrc.PKFile, func(b *bytes.Buffer) error { _, err := pk.WriteTo(b); return err }) // compressed, as gnark's WriteTo writes
	writeTo(gnarksrc.VKFile, func(b *bytes.Buffer) error { _, err := vk.WriteTo(b); return err })
	assign := &emulatedGadgets{A: emu(emuA), B: emu(emuB), AB: emu(emuProduct()), Small: 1<<20 - 1}
	full, err := frontend.NewWitness(assign, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	wpath := filepath.Join(t.TempDir(), "emu.witness")
	data, _ := full.MarshalBinary()
	os.WriteFile(wpath, data, 0o644)

	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Curve() != curve.BLS12_381 {
		t.Fatalf("curve %s", c.Curve())
	}
	out := t.TempDir()
	res := provertest.Run(t, provertest.Config(out, 1, 1), []*stages.Circuit{c},
		[]*stages.Job{{Request: stream.Request{ID: "emu", Witness: wpath}}}, 3*time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("results %+v", res)
	}
	if err := verifyWithGnark(t, vk, gnarksrc.HashDefault, res[0]); err != nil {
		t.Fatalf("gnark rejects the proof: %v", err)
	}
}

// Solidity export and calldata are BN254's: a BLS12-381 circuit gets an
// error naming its curve.
func TestSolidityIsBN254Only(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bls")
	if _, err := gnarksrc.SetupOn(curve.BLS12_381, "mulchain", 16, dir); err != nil {
		t.Fatal(err)
	}
	var sol bytes.Buffer
	if err := gnarksrc.ExportSolidity(dir, &sol); err == nil || !strings.Contains(err.Error(), "bls12-381") || !strings.Contains(err.Error(), "BN254") {
		t.Errorf("ExportSolidity of a BLS12-381 circuit: %v", err)
	}
	if _, err := gnarksrc.LoadDirWith(dir, gnarksrc.Options{Calldata: true}); err == nil || !strings.Contains(err.Error(), "bls12-381") {
		t.Errorf("calldata for a BLS12-381 circuit: %v", err)
	}
}

// circuit.json naming another curve than circuit.r1cs's is refused.
func TestMetaOfAnotherCurveIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bls")
	if _, err := gnarksrc.SetupOn(curve.BLS12_381, "mulchain", 16, dir); err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(gnarksrc.Meta{Builtin: "mulchain", Constraints: 16, Curve: "bn254"})
	os.WriteFile(filepath.Join(dir, gnarksrc.MetaFile), meta, 0o644)
	if _, err := gnarksrc.LoadDir(dir); err == nil || !strings.Contains(err.Error(), "bls12-381") {
		t.Errorf("circuit.json of bn254 over a bls12-381 r1cs: %v", err)
	}
}
