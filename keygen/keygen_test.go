package keygen_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/scs"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
)

var bothCurves = keygen.BothCurves

// Keys from keygen.Setup prove with gnark's own groth16.Prove and verify
// with gnark's groth16.Verify, on both curves, for a circuit of every
// kind: one public input and every wire significant (mulchain), mostly
// 0/1 wires (bits), a BSB22 commitment (commit), and two commitments,
// one to a public input (pubcommit). The proof does not verify against
// another witness's public inputs, and a key written and read back by
// gnark's codecs still verifies it.
func TestKeysProveAndVerifyWithGnark(t *testing.T) {
	for _, id := range bothCurves {
		for _, c := range keygen.Cases(t, id) {
			t.Run(fmt.Sprintf("%s/%s", id, c.Name), func(t *testing.T) {
				pk, vk, err := keygen.Setup(c.CCS)
				if err != nil {
					t.Fatal(err)
				}
				if pk.CurveID() != id.ECC() || vk.CurveID() != id.ECC() {
					t.Fatalf("keys of %s, %s for a %s circuit", pk.CurveID(), vk.CurveID(), id)
				}
				proveWithGnark(t, c, pk, vk)
				var buf bytes.Buffer
				if _, err := vk.WriteTo(&buf); err != nil {
					t.Fatal(err)
				}
				vk2 := groth16.NewVerifyingKey(id.ECC())
				if _, err := vk2.ReadFrom(&buf); err != nil {
					t.Fatal(err)
				}
				buf.Reset()
				if _, err := pk.WriteRawTo(&buf); err != nil {
					t.Fatal(err)
				}
				pk2 := groth16.NewProvingKey(id.ECC())
				if _, err := pk2.UnsafeReadFrom(&buf); err != nil {
					t.Fatal(err)
				}
				proof2, err := groth16.Prove(c.CCS, pk2, c.W2)
				if err != nil {
					t.Fatal(err)
				}
				if err := groth16.Verify(proof2, vk2, keygen.Public(t, c.W2)); err != nil {
					t.Fatalf("gnark rejects a proof from the keys read back: %v", err)
				}
			})
		}
	}
}

// Two setups of one circuit draw fresh toxic waste: no shared [α]₁, [β]₁,
// [δ]₁ or K point (gnark's IsDifferent), and a proof from one does not
// verify with the other's key.
func TestTwoSetupsDiffer(t *testing.T) {
	for _, id := range bothCurves {
		c := keygen.Cases(t, id)[3] // pubcommit
		pk1, vk1, err := keygen.Setup(c.CCS)
		if err != nil {
			t.Fatal(err)
		}
		pk2, vk2, err := keygen.Setup(c.CCS)
		if err != nil {
			t.Fatal(err)
		}
		if !pk1.IsDifferent(pk2) || !vk1.IsDifferent(vk2) {
			t.Fatalf("%s: two setups share points", id)
		}
		proof, err := groth16.Prove(c.CCS, pk1, c.W1)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(proof, vk2, keygen.Public(t, c.W1)); err == nil {
			t.Fatalf("%s: a proof from one setup verifies with another's key", id)
		}
	}
}

// A PLONK constraint system is refused, naming what it is.
func TestRefusesNonR1CS(t *testing.T) {
	ccs, err := frontend.Compile(curve.BN254.ECC().ScalarField(), scs.NewBuilder, &keygen.PubCommit{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := keygen.Setup(ccs); err == nil {
		t.Fatal("keygen set up a SparseR1CS")
	} else {
		t.Log(err)
	}
}

// WriteRawProvingKey writes gnark's pk.WriteRawTo bytes exactly, on both
// curves, for every kind of circuit (commitment keys included), whether
// a slice fits one chunk of its parallel encoding or takes many (chunks
// of 1000 bytes: 15 G1 points, 7 G2 points, a partial chunk last).
func TestWriteRawProvingKeyIsGnarks(t *testing.T) {
	for _, id := range bothCurves {
		for _, c := range keygen.Cases(t, id) {
			pk, _, err := keygen.Setup(c.CCS)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if _, err := pk.WriteRawTo(&want); err != nil {
				t.Fatal(err)
			}
			for _, round := range []int{16 << 20, 1000} {
				restore := keygen.SetChunkBytes(round)
				var got bytes.Buffer
				n, err := keygen.WriteRawProvingKey(&got, pk)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				if n != int64(got.Len()) || !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%s/%s, chunks of %d bytes: wrote %d bytes (said %d), gnark's WriteRawTo %d; equal: %v",
						id, c.Name, round, got.Len(), n, want.Len(), bytes.Equal(got.Bytes(), want.Bytes()))
				}
			}
		}
	}
	if _, err := keygen.WriteRawProvingKey(&bytes.Buffer{}, nil); err == nil {
		t.Fatal("wrote a nil proving key")
	}
}

// WithoutDomainTables leaves pk.Domain's FFT tables out and changes
// nothing else a file holds: from one toxic waste, WriteRawProvingKey
// writes the tableless key as gnark's WriteRawTo writes the key with them
// (its domain's flag set, as gnark's Setup writes it), where gnark's own
// WriteRawTo of the tableless key differs in that one byte. The tableless
// key proves and verifies with gnark's prover (for every kind of circuit;
// commitments draw their G2 point from crypto/rand, so only mulchain and
// bits compare bytes), and so does its file read back by gnark.
func TestWithoutDomainTablesWritesGnarksFile(t *testing.T) {
	const flagAt = 8 + 5*32 // the domain's cardinality and five scalars, both curves' Fr
	for _, id := range bothCurves {
		for _, c := range keygen.Cases(t, id) {
			t.Run(fmt.Sprintf("%s/%s", id, c.Name), func(t *testing.T) {
				seeded := func(opts ...keygen.Option) (groth16.ProvingKey, groth16.VerifyingKey) {
					restore := keygen.SetToxicWaste(rand.NewChaCha8([32]byte{26, 2}))
					defer restore()
					pk, vk, err := keygen.Setup(c.CCS, opts...)
					if err != nil {
						t.Fatal(err)
					}
					return pk, vk
				}
				full, _ := seeded()
				bare, vk := seeded(keygen.WithoutDomainTables())
				var want, got, gnarks bytes.Buffer
				if _, err := full.WriteRawTo(&want); err != nil {
					t.Fatal(err)
				}
				if _, err := keygen.WriteRawProvingKey(&got, bare); err != nil {
					t.Fatal(err)
				}
				if _, err := bare.WriteRawTo(&gnarks); err != nil {
					t.Fatal(err)
				}
				if w, g := want.Bytes()[flagAt], gnarks.Bytes()[flagAt]; w != 1 || g != 0 {
					t.Fatalf("domain flag %d with tables, %d without (gnark's WriteRawTo): want 1 and 0", w, g)
				}
				if c.Name == "mulchain" || c.Name == "bits" {
					if !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Fatalf("the tableless key's file (%d bytes) is not the full key's gnark file (%d bytes)", got.Len(), want.Len())
					}
				}
				proveWithGnark(t, c, bare, vk)
				pk2 := groth16.NewProvingKey(id.ECC())
				if _, err := pk2.UnsafeReadFrom(&got); err != nil {
					t.Fatal(err)
				}
				proveWithGnark(t, c, pk2, vk)
			})
		}
	}
}

// WithPhaseLog is told of every phase, in order, each once, and the
// phases' times add up to no more than the setup's.
func TestPhaseLog(t *testing.T) {
	c := keygen.Cases(t, curve.BN254)[2] // commit
	var phases []string
	var sum time.Duration
	start := time.Now()
	if _, _, err := keygen.Setup(c.CCS, keygen.WithPhaseLog(func(p string, d time.Duration) {
		phases = append(phases, p)
		sum += d
	})); err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	want := []string{"layout", "terms", "lagrange", "A(τ)", "G1 A", "B(τ)", "G1 B", "G1 Z", "K(τ)", "G1 K", "commitments", "B(τ) again", "G2 B", "verifying key"}
	if fmt.Sprint(phases) != fmt.Sprint(want) {
		t.Fatalf("phases %q, want %q", phases, want)
	}
	if sum > total {
		t.Fatalf("phases add up to %s, the setup took %s", sum, total)
	}
}

// proveWithGnark proves c's first witness with gnark's own prover and keys
// pk, vk, checks that gnark's verifier accepts it and refuses it against the
// second witness's public inputs.
func proveWithGnark(t *testing.T, c keygen.Case, pk groth16.ProvingKey, vk groth16.VerifyingKey) {
	t.Helper()
	proof, err := groth16.Prove(c.CCS, pk, c.W1)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, keygen.Public(t, c.W1)); err != nil {
		t.Fatalf("gnark rejects the proof: %v", err)
	}
	if err := groth16.Verify(proof, vk, keygen.Public(t, c.W2)); err == nil {
		t.Fatal("gnark accepts the proof for another witness's public inputs")
	}
}
