package circuits

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/mem"
)

// ErrTooLarge marks a setup refused before any work: a circuit over a hard
// limit, or one whose setup needs more memory than the process may use.
var ErrTooLarge = errors.New("too large")

// MaxLogDomain bounds the evaluation domain of every circuit zkpipe sets up
// or proves: 2²⁷. BN254's scalar field has 2-adicity 28, so gnark's FFT
// domains stop at 2²⁸; zkpipe's circom path evaluates h over the 2n domain
// (source/circomsrc, maxLogDomain) and its GPU tables are sized for 2²⁷, so
// zkpipe stops one power earlier, for both sources.
const MaxLogDomain = 27

// The memory model of zkpipe's setup, fitted when it ran gnark's
// groth16.Setup and encoded the files in memory (gnarksrc.Setup now runs
// keygen.Setup and streams the files, which peak lower: 597 MB for
// mulchain 2¹⁸ where this says 669), from gnark v0.16.3's
// backend/groth16/bn254/setup.go with W wires, n constraints and the
// domain d = n rounded up to a power of two:
//
//	compile      the builder's and the r1cs's terms             ~0.5 KiB a wire
//	setupABC     A, B, C, pk.K scalars; t and 1/t over n         4·32 W + 2·32 n
//	G1 batch     [α β δ A B Z vkK pkK] scalars then affine points (3W + d)·(32+64)
//	G2 batch     B scalars, then affine points                   W·(32+128)
//	Z            d scalars                                        32 d
//	encode       pk raw (64 a G1, 128 a G2 point) in a growing buffer, ≤ 2× it
//
// and the Go heap's slack (GOGC=100: up to twice the live heap) on top.
// Measured peak RSS of `zkpipe setup` on the 2-core machine (go 1.26):
//
//	mulchain 2¹⁶ (W=n=d)        218 MB     mulchain 2¹⁸    669 MB
//	bits 2¹⁸ (W≈n, d≈2n)        794 MB     commit 2¹⁶ (W≈2n, d≈2n)  291 MB
//
// which a least-squares fit puts at 2.08 KB a wire and 0.48 KB a domain
// point. The model rounds up, so that it is above every measurement
// (10–40%): setupBytesPerWire a wire, setupBytesPerPoint a domain point, and
// setupBaseBytes for the process.
const (
	setupBytesPerWire  = 2 << 10
	setupBytesPerPoint = 512
	setupBaseBytes     = 64 << 20
)

// SetupMemory is about how many bytes setting up a circuit of this many
// constraints and wires takes at its peak (see the model above).
func SetupMemory(constraints, wires int) int64 {
	return setupBaseBytes + setupBytesPerWire*int64(wires) + setupBytesPerPoint*domainOf(constraints)
}

// domainOf is gnark's FFT domain for n constraints: n rounded up to a power
// of two (fft.NewDomain).
func domainOf(n int) int64 { return int64(1) << bits.Len64(uint64(max(n, 1)-1)) }

// CheckSetup refuses a setup of a circuit with this many constraints and
// wires that cannot run here: a domain over 2^MaxLogDomain, or a peak
// memory (SetupMemory) over allow, the bytes this process may use
// (mem.ReadMachine().Limit; 0 means no figure is known). The error wraps
// ErrTooLarge and names both figures.
func CheckSetup(constraints, wires int, allow int64) error {
	if err := checkDomain(constraints); err != nil {
		return fmt.Errorf("setup of %w", err)
	}
	if need := SetupMemory(constraints, wires); allow > 0 && need > allow {
		return fmt.Errorf("setup of %d constraints (%d wires) needs about %s; this machine allows %s: %w",
			constraints, wires, mem.FormatBytes(need), mem.FormatBytes(allow), ErrTooLarge)
	}
	return nil
}

// checkDomain refuses a circuit of more than 2^MaxLogDomain constraints.
func checkDomain(constraints int) error {
	if constraints > 1<<MaxLogDomain {
		return fmt.Errorf("%d constraints: over zkpipe's limit of 2^%d = %d (a domain of 2^%d; BN254's scalar field has 2-adicity 28): %w",
			constraints, MaxLogDomain, 1<<MaxLogDomain, bits.Len64(uint64(constraints)-1), ErrTooLarge)
	}
	return nil
}

// CheckSetupOf is CheckSetup for a compiled constraint system.
func CheckSetupOf(ccs constraint.ConstraintSystem, allow int64) error {
	wires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
	return CheckSetup(ccs.GetNbConstraints(), wires, allow)
}

// CheckSetup refuses, before compiling, a setup of b at about n constraints
// that cannot run here, by the fewest constraints and wires b can have at n
// (compiling 10⁸ constraints alone takes tens of GiB): see CheckSetup.
func (b Builtin) CheckSetup(n int, allow int64) error {
	if n < MinConstraints {
		return fmt.Errorf("%s: %d constraints is below the minimum %d", b.Name, n, MinConstraints)
	}
	c, w := b.floor(n)
	if err := CheckSetup(c, w, allow); err != nil {
		return fmt.Errorf("%s at --constraints %d: %w", b.Name, n, err)
	}
	return nil
}
