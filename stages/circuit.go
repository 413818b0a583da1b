package stages

import (
	"fmt"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Circuit is a loaded circuit: its proving key made resident once, shared by
// every job of the circuit, and the source-specific part behind Source.
type Circuit struct {
	Name        string
	Constraints int
	NbWires     int
	NbPublic    int // public wires, including the constant one wire
	Source      Source
	// SynthesisBytes is host memory a job's Synthesize holds beside its
	// vectors, counted in its reservation: a circom witness calculator's
	// linear memory at its limit (the user's wasm may grow it that far).
	SynthesisBytes int64

	// Host is what a job of the circuit holds in host memory on the
	// backends it is loaded on (Steps.HostUse; the engine sets it at
	// load): the footprint counts only that. The zero value is the CPU
	// backend's, which holds everything there.
	Host HostUse

	// Key holds the bases of every MSM; Resident is the device's copy.
	Key      *proofdata.Key
	Resident proofdata.Resident

	// Sel maps each query's scalars to wires: the scalar of base j of the A
	// query is W[Sel.A[j]]; B₁ and B₂ share Sel.B. Wires whose bases are
	// infinity are left out (gnark's pk.InfinityA/B), and K covers only the
	// private wires that are neither committed nor commitments.
	Sel struct{ A, B, K []uint32 }
}

// HostUse says which of a job's buffers live on a device rather than on the
// host past pin/transfer. Whatever the backend, a job holds W, the
// solver's flags, a, b, c and what its Synthesize needs (SynthesisBytes)
// on the host until pin/transfer.
type HostUse struct {
	// DeviceG1: the G1 backend stages a, b, c and the A, B and K queries
	// on its device and computes there (Backend.StagesOnDevice): a, b, c
	// go back to the pool at pin/transfer, and no classified A or K
	// query, padded NTT copy or MSM scratch is the host's.
	DeviceG1 bool
	// DeviceG2: B_G2 runs on that device too. Without it B's query is
	// classified on the host and held to the end, and so are B_G2's
	// gathered G2 bases and MSM scratch (the CPU's G2 MSM).
	DeviceG2 bool
}

// Curve is the circuit's curve: its key's.
func (c *Circuit) Curve() curve.ID { return c.Key.Curve }

// Check verifies that the selections fit the key and the wire count, so a
// bad key fails at load rather than inside a proof.
func (c *Circuit) Check() error {
	k := c.Key
	switch {
	case !k.Curve.Valid():
		return fmt.Errorf("circuit %s: key of no known curve (%s)", c.Name, k.Curve)
	case len(c.Sel.A) != k.Size.A:
		return fmt.Errorf("circuit %s: %d A scalars for %d A bases", c.Name, len(c.Sel.A), k.Size.A)
	case len(c.Sel.B) != k.Size.B || k.Size.B != k.Size.B2:
		return fmt.Errorf("circuit %s: %d B scalars for %d B₁ and %d B₂ bases", c.Name, len(c.Sel.B), k.Size.B, k.Size.B2)
	case len(c.Sel.K) != k.Size.K:
		return fmt.Errorf("circuit %s: %d K scalars for %d K bases", c.Name, len(c.Sel.K), k.Size.K)
	case k.HLen() > k.N():
		return fmt.Errorf("circuit %s: H query of %d points for a domain of %d", c.Name, k.HLen(), k.N())
	}
	for name, sel := range map[string][]uint32{"A": c.Sel.A, "B": c.Sel.B, "K": c.Sel.K} {
		for _, w := range sel {
			if int(w) >= c.NbWires {
				return fmt.Errorf("circuit %s: %s selects wire %d of %d", c.Name, name, w, c.NbWires)
			}
		}
	}
	return nil
}
