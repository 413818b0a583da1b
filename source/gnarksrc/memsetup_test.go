package gnarksrc_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// SetupCircuit sets a built-in up in memory, on each curve: the circuit is
// the built-in's at that size, it makes the built-in's witnesses, and a
// proof of gnark's with its keys verifies against its verifying key.
func TestSetupCircuitInMemory(t *testing.T) {
	for _, id := range []curve.ID{curve.BN254, curve.BLS12_381} {
		t.Run(id.String(), func(t *testing.T) {
			var phases []string
			circ, info, err := gnarksrc.SetupCircuit(id, "commit", 256, gnarksrc.Options{}, func(p string, _ time.Duration) { phases = append(phases, p) })
			if err != nil {
				t.Fatal(err)
			}
			if circ.Name != "commit" || circ.Curve() != id || info.Constraints != circ.Constraints || info.Wires != circ.NbWires || info.Domain < info.Constraints || info.Domain >= 2*info.Constraints {
				t.Fatalf("circuit %s on %s, %d constraints, %d wires; info %+v", circ.Name, circ.Curve(), circ.Constraints, circ.NbWires, info)
			}
			if len(phases) < 2 || phases[0] != "compile" {
				t.Errorf("phases %v, want compile then keygen's", phases)
			}
			src := circ.Source.(*gnarksrc.Source)
			w, err := src.Witness(3)
			if err != nil {
				t.Fatal(err)
			}
			proof, err := groth16.Prove(src.R1CS(), src.ProvingKey(), w, src.ProverOptions()...)
			if err != nil {
				t.Fatal(err)
			}
			pub, err := w.Public()
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, src.VerifyingKey(), pub, src.HashToField().VerifierOption()); err != nil {
				t.Fatalf("gnark's proof with the in-memory keys: %v", err)
			}
		})
	}
}

// A size over zkpipe's limit is refused before anything is compiled, with
// an error wrapping circuits.ErrTooLarge; an unknown built-in is named.
func TestSetupCircuitRefuses(t *testing.T) {
	_, _, err := gnarksrc.SetupCircuit(curve.BN254, "mulchain", 200_000_000, gnarksrc.Options{}, nil)
	if !errors.Is(err, circuits.ErrTooLarge) {
		t.Errorf("200000000 constraints: %v, want ErrTooLarge", err)
	}
	if _, _, err := gnarksrc.SetupCircuit(curve.BN254, "no-such", 64, gnarksrc.Options{}, nil); err == nil {
		t.Error("an unknown built-in was set up")
	}
}

// The in-memory proving key has no reference but the circuit's: once the
// engine drops the host key (as it does when the key is resident on a
// GPU), its points are garbage, not a second copy of a key of tens of GiB.
// Finalizers on the A and Z queries' arrays say when they are collected.
func TestSetupCircuitKeyIsFreedOnDrop(t *testing.T) {
	circ, _, err := gnarksrc.SetupCircuit(curve.BN254, "mulchain", 4096, gnarksrc.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pk := circ.Source.(*gnarksrc.Source).ProvingKey().(*groth16bn254.ProvingKey)
	freed := make(chan string, 2)
	runtime.SetFinalizer(&pk.G1.A[0], func(*bn254.G1Affine) { freed <- "A" })
	runtime.SetFinalizer(&pk.G1.Z[0], func(*bn254.G1Affine) { freed <- "Z" })
	circ.Key.Drop(0) // keep nothing on the host, as the engine does on a GPU
	if pk.G1.A != nil || pk.G1.Z != nil {
		t.Fatal("the key dropped its points, the gnark proving key still holds them")
	}
	if circ.Key.Dropped() != proofdata.AllParts {
		t.Fatalf("dropped %b, want every part", circ.Key.Dropped())
	}
	got := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
		runtime.GC()
		select {
		case q := <-freed:
			got[q] = true
		case <-time.After(50 * time.Millisecond):
		}
	}
	if len(got) < 2 {
		t.Fatalf("after the drop only %v of the A and Z queries were collected: something else holds the key's points", got)
	}
	runtime.KeepAlive(circ)
}
