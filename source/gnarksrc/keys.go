package gnarksrc

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bn254"
)

// checkKeys refuses a circuit whose constraint system, proving key and
// verifying key are not of one circuit and one setup: a proof made with
// such keys is rejected by every verifier, and each job would fail (or,
// before this check and the one in Emit, be reported proved).
//
// What can be checked without the setup's secrets, following gnark's
// groth16 Setup (backend/groth16/bn254/setup.go, v0.16.3):
//
//	r1cs ↔ pk  wires = len(InfinityA) = len(InfinityB); domain = the power of
//	           two ≥ constraints; len(Z) = domain − 1; len(K) = private wires
//	           less committed and commitment wires; InfinityA[i] (B) exactly
//	           when wire i is absent from the A (B) matrix; one commitment
//	           key per commitment, of the committed wires' count
//	r1cs ↔ vk  len(K) = public wires + commitments; one commitment key per
//	           commitment; the public committed wires are the r1cs's
//	pk ↔ vk    [α]₁, [β]₁, [δ]₁, [β]₂, [δ]₂ equal; each commitment key pair
//	           satisfies e(basis₀, −[σ]₂)·e(σ·basis₀, G₂) = 1
//
// The errors name the file at fault, or both when either may be.
func checkKeys(ccs *cs.R1CS, pk *groth16bn254.ProvingKey, vk *groth16bn254.VerifyingKey, commits constraint.Groth16Commitments) error {
	nbPublic, nbSecret := ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables()
	nbWires := ccs.GetNbInternalVariables() + nbPublic + nbSecret
	nbConstraints := ccs.GetNbConstraints()
	privateCommitted := commits.GetPrivateCommitted()
	nbPrivateCommitted := 0
	for _, ws := range privateCommitted {
		nbPrivateCommitted += len(ws)
	}

	// ─── r1cs ↔ pk ───────────────────────────────────────────────────────────
	if len(pk.InfinityA) != nbWires || len(pk.InfinityB) != nbWires {
		return fmt.Errorf("%s: proving key is for %d wires, %s has %d: not of one circuit", PKFile, len(pk.InfinityA), R1CSFile, nbWires)
	}
	domain := uint64(1) << bits.Len64(uint64(max(nbConstraints, 1)-1))
	if pk.Domain.Cardinality != domain {
		return fmt.Errorf("%s: proving key's domain is %d, %s's %d constraints need %d: not of one circuit", PKFile, pk.Domain.Cardinality, R1CSFile, nbConstraints, domain)
	}
	if uint64(len(pk.G1.Z)) != domain-1 {
		return fmt.Errorf("%s: %d H points for a domain of %d (want %d)", PKFile, len(pk.G1.Z), domain, domain-1)
	}
	if want := nbSecret + ccs.GetNbInternalVariables() - nbPrivateCommitted - len(commits); len(pk.G1.K) != want {
		return fmt.Errorf("%s: proving key has %d private (K) points, %s has %d private wires: not of one circuit", PKFile, len(pk.G1.K), R1CSFile, want)
	}
	inA, inB := make([]bool, nbWires), make([]bool, nbWires)
	it := ccs.GetR1CIterator()
	for c := it.Next(); c != nil; c = it.Next() {
		for _, t := range c.L {
			if t.CoeffID() != constraint.CoeffIdZero && t.WireID() < nbWires {
				inA[t.WireID()] = true
			}
		}
		for _, t := range c.R {
			if t.CoeffID() != constraint.CoeffIdZero && t.WireID() < nbWires {
				inB[t.WireID()] = true
			}
		}
	}
	for i := range nbWires {
		if pk.InfinityA[i] == inA[i] || pk.InfinityB[i] == inB[i] {
			return fmt.Errorf("%s and %s disagree on which wires the A and B matrices use (wire %d): not of one circuit", R1CSFile, PKFile, i)
		}
	}
	if len(pk.CommitmentKeys) != len(commits) {
		return fmt.Errorf("%s: proving key has %d commitment keys, %s has %d commitments: not of one circuit", PKFile, len(pk.CommitmentKeys), R1CSFile, len(commits))
	}
	for i, ws := range privateCommitted {
		if ck := pk.CommitmentKeys[i]; len(ck.Basis) != len(ws) || len(ck.BasisExpSigma) != len(ws) {
			return fmt.Errorf("%s: commitment key %d is for %d wires, %s commits %d: not of one circuit", PKFile, i, len(ck.Basis), R1CSFile, len(ws))
		}
	}

	// ─── r1cs ↔ vk ───────────────────────────────────────────────────────────
	if want := nbPublic + len(commits); len(vk.G1.K) != want {
		return fmt.Errorf("%s: verifying key is for %d public wires, %s has %d (with %d commitments): not of one circuit", VKFile, len(vk.G1.K), R1CSFile, want, len(commits))
	}
	if len(vk.CommitmentKeys) != len(commits) {
		return fmt.Errorf("%s: verifying key has %d commitment keys, %s has %d commitments: not of one circuit", VKFile, len(vk.CommitmentKeys), R1CSFile, len(commits))
	}
	want := commits.GetPublicAndCommitmentCommitted(commits.CommitmentIndexes(), nbPublic)
	if len(vk.PublicAndCommitmentCommitted) != len(want) {
		return fmt.Errorf("%s: verifying key's committed public wires are not %s's: not of one circuit", VKFile, R1CSFile)
	}
	for i := range want {
		if !slices.Equal(vk.PublicAndCommitmentCommitted[i], want[i]) {
			return fmt.Errorf("%s: verifying key's committed public wires are not %s's: not of one circuit", VKFile, R1CSFile)
		}
	}

	// ─── pk ↔ vk ─────────────────────────────────────────────────────────────
	differs := func(what string) error {
		return fmt.Errorf("%s is not the verifying key of %s (%s differs): one of them is from another circuit or setup", VKFile, PKFile, what)
	}
	switch {
	case !vk.G1.Alpha.Equal(&pk.G1.Alpha):
		return differs("[α]₁")
	case !vk.G2.Beta.Equal(&pk.G2.Beta):
		return differs("[β]₂")
	case !vk.G2.Delta.Equal(&pk.G2.Delta):
		return differs("[δ]₂")
	// [β]₁ and [δ]₁ are in the vk "for compatibility": older keys may lack them
	case !vk.G1.Beta.IsInfinity() && !vk.G1.Beta.Equal(&pk.G1.Beta):
		return differs("[β]₁")
	case !vk.G1.Delta.IsInfinity() && !vk.G1.Delta.Equal(&pk.G1.Delta):
		return differs("[δ]₁")
	}
	for i := range commits {
		ck, cvk := &pk.CommitmentKeys[i], &vk.CommitmentKeys[i]
		if len(ck.Basis) == 0 {
			continue
		}
		ok, err := bn254.PairingCheck([]bn254.G1Affine{ck.Basis[0], ck.BasisExpSigma[0]}, []bn254.G2Affine{cvk.GSigmaNeg, cvk.G})
		if err != nil {
			return err
		}
		if !ok {
			return differs(fmt.Sprintf("commitment key %d", i))
		}
	}
	return nil
}
