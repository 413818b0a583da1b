package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// gnarkAccepts checks a proof and public witness, as bytes, with gnark's
// own groth16.Verify and the circuit's verifying key.
func gnarkAccepts(t *testing.T, c *stages.Circuit, proofData, publicData []byte) {
	t.Helper()
	proof := groth16.NewProof(ecc.BN254)
	if _, err := proof.ReadFrom(bytes.NewReader(proofData)); err != nil {
		t.Fatalf("proof: %v", err)
	}
	pub, err := witness.New(ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.UnmarshalBinary(publicData); err != nil {
		t.Fatalf("public witness: %v", err)
	}
	vk := groth16.NewVerifyingKey(ecc.BN254)
	if err := readChainVK(vk); err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, pub); err != nil {
		t.Errorf("gnark rejects the proof: %v", err)
	}
}

// readChainVK reads mulchain's circuit.vk, as gnark wrote it, into vk.
func readChainVK(vk groth16.VerifyingKey) error {
	data, err := os.ReadFile(filepath.Join(must(chainDir()), "circuit.vk"))
	if err != nil {
		return err
	}
	_, err = vk.ReadFrom(bytes.NewReader(data))
	return err
}

// witnessBytes is mulchain's witness for seed as gnark's binary encoding,
// what a witness file holds.
func witnessBytes(t *testing.T, c *stages.Circuit, seed int64) []byte {
	t.Helper()
	b, err := chainWitness(t, c, seed).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countingHold is a reservation whose release is counted.
func countingHold(n int64, released *int64) *mem.Reservation {
	return mem.NewReservation(n, func(b int64) { *released += b })
}

// An engine given an output writer opens no directory: a witness given as
// bytes in hand is proven and every output lands in the writer (or the
// job's own), named as the directory's files are, and nothing is written
// in the working directory.
func TestWitnessInHandAndOutputWriterTouchNoDisk(t *testing.T) {
	t.Chdir(t.TempDir())
	c := loadChain(t)
	out := new(blob.Memory)
	o := cpuOptions("")
	o.Output = out
	e, err := New(context.Background(), o, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Out() != nil {
		t.Errorf("an engine with an output writer opened a directory: %s", e.Out().Path())
	}

	var released int64
	hold := countingHold(1000, &released)
	in := blob.NewInput("witness object a@1.witness", witnessBytes(t, c, 5), hold)
	own := new(blob.Memory) // job b's own writer
	jobs := make(chan stream.Line, 3)
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "a", Witness: "store:a@1.witness"}, Witness: in}
	jobs <- stream.Line{Number: 2, Request: stream.Request{ID: "b", Witness: "store:b@1.witness"},
		Witness: blob.NewInput("witness object b@1.witness", witnessBytes(t, c, 6), nil), Out: own}
	jobs <- stream.Line{Number: 3, Request: stream.Request{ID: "bad", Witness: "store:bad@1.witness"},
		Witness: blob.NewInput("witness object bad@1.witness", witnessBytes(t, c, 6)[:40], nil)}
	close(jobs)
	results := map[string]stream.Result{}
	if err := e.Run(context.Background(), jobs, func(r stream.Result) error { results[r.ID] = r; return nil }); err != nil {
		t.Fatal(err)
	}

	for id, w := range map[string]*blob.Memory{"a": out, "b": own} {
		r := results[id]
		if r.Error != "" || r.Proof != id+".proof" || r.Public != id+".public" {
			t.Fatalf("job %s: %+v, want a proof named %s.proof", id, r, id)
		}
		if got, want := w.Names(), []string{id + ".public", id + ".proof.json", id + ".proof"}; !slices.Equal(got, want) {
			t.Errorf("job %s wrote %v, want %v", id, got, want)
		}
		p, _ := w.File(r.Proof)
		pub, _ := w.File(r.Public)
		gnarkAccepts(t, c, p, pub)
	}
	if names := out.Names(); slices.Contains(names, "b.proof") {
		t.Errorf("job b's outputs went to the engine's writer too: %v", names)
	}
	if r := results["bad"]; r.Error == "" || !strings.Contains(r.Error, "witness object bad@1.witness") || !strings.Contains(r.Error, "truncated") {
		t.Errorf("a truncated witness in hand: %+v, want an error naming it", r)
	}
	if _, _, err := in.Open(context.Background()); err == nil || released != 1000 {
		t.Errorf("the witness in hand was not released once read (released %d bytes of its hold)", released)
	}

	w := chainWitness(t, c, 7)
	if proof, err := e.Prove(context.Background(), "", w); err != nil {
		t.Fatal(err)
	} else {
		verifyByGnark(t, c, proof, w)
	}
	if ents, err := os.ReadDir("."); err != nil || len(ents) != 0 {
		t.Errorf("the engine wrote into the working directory: %v %v", ents, err)
	}
}

func TestOutputWriterTakesThePlaceOfTheDirectory(t *testing.T) {
	o := cpuOptions(t.TempDir())
	o.Output = new(blob.Memory)
	if _, err := New(context.Background(), o); err == nil || !strings.Contains(err.Error(), "Output") {
		t.Errorf("Out and Output both: %v, want an error", err)
	}
	o.Out, o.SkipDone = "", true
	if _, err := New(context.Background(), o); err == nil || !strings.Contains(err.Error(), "SkipDone") {
		t.Errorf("SkipDone with Output: %v, want an error", err)
	}
}

// A circom .wtns in hand is read as the file would be, and the proof it
// gives is one snarkjs verifies.
func TestWtnsInHandGivesWhatSnarkjsVerifies(t *testing.T) {
	ctx := context.Background()
	c, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: filepath.Join(mulDir, "mul.zkey")})
	if err != nil {
		t.Fatal(err)
	}
	out := new(blob.Memory)
	o := cpuOptions("")
	o.Output = out
	e, err := New(ctx, o, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	data, err := os.ReadFile(filepath.Join(mulDir, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	jobs := make(chan stream.Line, 2)
	jobs <- stream.Line{Number: 1, Request: stream.Request{ID: "m", Wtns: "store:m@1.wtns"}, Witness: blob.NewInput("wtns object m@1.wtns", data, nil)}
	jobs <- stream.Line{Number: 2, Request: stream.Request{ID: "huge", Wtns: "store:huge@1.wtns"},
		Witness: blob.NewInput("wtns object huge@1.wtns", make([]byte, 1<<20), nil)}
	close(jobs)
	results := map[string]stream.Result{}
	if err := e.Run(ctx, jobs, func(r stream.Result) error { results[r.ID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if r := results["huge"]; !strings.Contains(r.Error, "more than") {
		t.Errorf("a wtns in hand far larger than the circuit's: %+v, want refused by its size", r)
	}
	r := results["m"]
	if r.Error != "" {
		t.Fatalf("m: %s", r.Error)
	}
	dir := t.TempDir()
	for name, file := range map[string]string{"proof.json": r.Proof, "public.json": r.Public} {
		b, ok := out.File(file)
		if !ok {
			t.Fatalf("no %s among the outputs %v", file, out.Names())
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var pub []string
	if b, _ := out.File(r.Public); json.Unmarshal(b, &pub) != nil || !slices.Equal(pub, r.PublicInputs) {
		t.Errorf("public.json %v, result line %v", pub, r.PublicInputs)
	}
	vkey, err := filepath.Abs(filepath.Join(mulDir, "mul.vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(snarkjs(t), "groth16", "verify", vkey, "public.json", "proof.json")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(msg), "OK") {
		t.Errorf("snarkjs groth16 verify: %v: %s", err, msg)
	}
}
