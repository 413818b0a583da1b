package gnarksrc_test

import (
	"crypto/sha256"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/std/hash/sha2"
	"github.com/consensys/gnark/std/math/emulated"
	"github.com/consensys/gnark/std/math/uints"
	"github.com/consensys/gnark/std/rangecheck"
	"github.com/zkpipe/zkpipe/internal/provertest"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// stdGadgets uses gnark's standard library the way a user's circuit would:
// SHA-256 of a secret message against a public digest (byte lookups, BSB22
// commitments), a multiplication in secp256k1's base field (emulated
// arithmetic), and a range check. Each solves only with gnark's std hints.
type stdGadgets struct {
	Msg    []uints.U8
	Digest [32]uints.U8 `gnark:",public"`
	A, B   emulated.Element[emulated.Secp256k1Fp]
	AB     emulated.Element[emulated.Secp256k1Fp] `gnark:",public"`
	Small  frontend.Variable
}

func (c *stdGadgets) Define(api frontend.API) error {
	h, err := sha2.New(api)
	if err != nil {
		return err
	}
	h.Write(c.Msg)
	bytes, err := uints.NewBytes(api)
	if err != nil {
		return err
	}
	for i, b := range h.Sum() {
		bytes.AssertIsEqual(b, c.Digest[i])
	}
	f, err := emulated.NewField[emulated.Secp256k1Fp](api)
	if err != nil {
		return err
	}
	f.AssertIsEqual(f.Mul(&c.A, &c.B), &c.AB)
	rangecheck.New(api).Check(c.Small, 20)
	return nil
}

// emulatedGadgets is stdGadgets less SHA-256: small enough (a few thousand
// constraints) for its circuit directory to be a test fixture.
type emulatedGadgets struct {
	A, B  emulated.Element[emulated.Secp256k1Fp]
	AB    emulated.Element[emulated.Secp256k1Fp] `gnark:",public"`
	Small frontend.Variable
}

func (c *emulatedGadgets) Define(api frontend.API) error {
	f, err := emulated.NewField[emulated.Secp256k1Fp](api)
	if err != nil {
		return err
	}
	f.AssertIsEqual(f.Mul(&c.A, &c.B), &c.AB)
	rangecheck.New(api).Check(c.Small, 20)
	return nil
}

var (
	emuA, _ = new(big.Int).SetString("5a1f0c3e9b7d2a4f6e8c1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1", 16)
	emuB, _ = new(big.Int).SetString("3c5e7a9b1d3f5a7c9e0b2d4f6a8c1e3b5d7f9a0c2e4b6d8f0a1c3e5b7d9f0a2", 16)
)

func emu(x *big.Int) emulated.Element[emulated.Secp256k1Fp] {
	return emulated.ValueOf[emulated.Secp256k1Fp](x)
}

func emuProduct() *big.Int {
	return new(big.Int).Mod(new(big.Int).Mul(emuA, emuB), emulated.Secp256k1Fp{}.Modulus())
}

// writeCircuitDir compiles circuit, sets it up with gnark's groth16.Setup
// and writes dir/circuit.{r1cs,pk,vk} and the witness of assign at
// witnessPath; it returns the verifying key.
func writeCircuitDir(t *testing.T, circuit, assign frontend.Circuit, dir, witnessPath string) groth16.VerifyingKey {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, circuit)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d constraints, %d commitments", ccs.GetNbConstraints(), len(ccs.GetCommitments().CommitmentIndexes()))
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path string, wt func(f *os.File) error) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := wt(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, gnarksrc.R1CSFile), func(f *os.File) error { _, err := ccs.WriteTo(f); return err })
	write(filepath.Join(dir, gnarksrc.PKFile), func(f *os.File) error { _, err := pk.WriteTo(f); return err })
	write(filepath.Join(dir, gnarksrc.VKFile), func(f *os.File) error { _, err := vk.WriteTo(f); return err })
	full, err := frontend.NewWitness(assign, ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	write(witnessPath, func(f *os.File) error { _, err := full.WriteTo(f); return err })
	return vk
}

// TestWriteStdFixture writes the fixture of package stdfixture_test, whose
// test binary imports no gnark/std package (their init functions register
// hints), as a zkpipe binary does not:
//
//	ZKPIPE_WRITE_STD_FIXTURE=1 go test ./source/gnarksrc -run WriteStdFixture
func TestWriteStdFixture(t *testing.T) {
	if os.Getenv("ZKPIPE_WRITE_STD_FIXTURE") == "" {
		t.Skip("set ZKPIPE_WRITE_STD_FIXTURE=1 to rewrite source/gnarksrc/stdfixture/testdata")
	}
	dir := filepath.Join("stdfixture", "testdata", "emulated")
	assign := &emulatedGadgets{A: emu(emuA), B: emu(emuB), AB: emu(emuProduct()), Small: 1<<20 - 1}
	writeCircuitDir(t, &emulatedGadgets{}, assign, dir, filepath.Join("stdfixture", "testdata", "emulated.witness"))
}

// A circuit built from gnark's std library is set up by gnark, written as a
// circuit directory, loaded, proven through the stages and accepted by
// gnark's groth16.Verify.
func TestStdGadgetsProve(t *testing.T) {
	if testing.Short() {
		t.Skip("a SHA-256 circuit's setup takes a while")
	}
	msg := []byte("zkpipe proves gnark std gadgets") // one block
	digest := sha256.Sum256(msg)
	assign := &stdGadgets{
		Msg: uints.NewU8Array(msg),
		A:   emu(emuA), B: emu(emuB), AB: emu(emuProduct()),
		Small: 1<<20 - 1,
	}
	copy(assign.Digest[:], uints.NewU8Array(digest[:]))
	dir := filepath.Join(t.TempDir(), "std")
	wpath := filepath.Join(t.TempDir(), "std.witness")
	vk := writeCircuitDir(t, &stdGadgets{Msg: make([]uints.U8, len(msg))}, assign, dir, wpath)

	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res := provertest.Run(t, provertest.Config(out, 1, 1), []*stages.Circuit{c},
		[]*stages.Job{{Request: stream.Request{ID: "std", Witness: wpath}}}, 5*time.Minute)
	if len(res) != 1 || res[0].Error != "" {
		t.Fatalf("results %+v", res)
	}
	if err := gnarksrc.VerifyFiles(vk, res[0].Proof, res[0].Public); err != nil {
		t.Fatalf("gnark rejects the proof: %v", err)
	}
}
