package circuits

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/curve"
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

// The memory model of zkpipe's setup (gnarksrc.Setup: gnark's compile,
// keygen.Setup, the files streamed), BN254, with W wires, n constraints
// and the domain d = n rounded up to a power of two. What is live at the
// peak, the G1 products, from keygen's code:
//
//	the r1cs       instructions, coefficient table, levels    ~100–400 B a wire (mulchain's
//	               (and, for a while, the compile's garbage)   distinct coefficients the most)
//	scalars        A, B, K (C freed), the terms (12 B each)    ~150 B a wire
//	points         pk.G1.A, B, K, then pk.G2.B                  64·3 + 128 B a wire at most
//	Z              d scalars, then d − 1 points                 32 + 64 B a point
//	the domain     gnark's FFT tables in pk.Domain              4·32 B a point
//
// about 700 B a wire and 230 B a domain point, and Go's heap slack on top
// (most of it is large pointer-free slices, so GOGC's 2× is rarely
// reached). Measured peak RSS of `zkpipe setup` (go 1.26, /usr/bin/time -v):
//
//	                                 W         d       peak    model
//	2 cores, bits 2¹⁶           65,645    2¹⁷      180 MB   243 MB
//	         mulchain 2¹⁶       65,538    2¹⁶      177 MB   226 MB
//	         bits 2¹⁸          262,577    2¹⁹      498 MB   571 MB
//	         mulchain 2¹⁸      262,146    2¹⁸      490 MB   503 MB
//	         commit 2¹⁸        524,728    2¹⁹      684 MB   873 MB
//	         bits 2²⁰        1,050,304    2²¹     1.49 GB  1.88 GB
//	         mulchain 2²⁰    1,048,578    2²⁰     1.38 GB  1.61 GB
//	H200,    bits 16.8M     16,804,835    2²⁵    20.3 GB  28.1 GB
//
// The model is setupBaseBytes + setupBytesPerWire·W + setupBytesPerPoint·d,
// rounded up from those so that it is above every one (3–40%): the
// mulchain's coefficients set the per-wire figure, the H200's point the
// scale. (The model this replaces was fitted to gnark's own groth16.Setup:
// 2 KiB a wire and 512 B a point, 2–3× these peaks.) BLS12-381's points are
// 1.5× BN254's and its peaks measured 1.16–1.37× (bits and mulchain at 2¹⁸
// and 2²⁰: 577 MB, 589 MB, 1.74 GB, 1.65 GB): its model is 7/5 of this.
// On the 128 GiB H200 host this allows BN254 bits at 2²⁶ (about 90 GB)
// and refuses it at 2²⁷.
const (
	setupBytesPerWire  = 1152
	setupBytesPerPoint = 256
	setupBaseBytes     = 128 << 20
	// BLS12-381's model is 7/5 of BN254's
	setupBLS12381Fifths = 7
)

// SetupMemory is about how many bytes setting up a BN254 circuit of this
// many constraints and wires takes at its peak (see the model above).
func SetupMemory(constraints, wires int) int64 {
	return setupBaseBytes + setupBytesPerWire*int64(wires) + setupBytesPerPoint*domainOf(constraints)
}

// SetupMemoryOn is SetupMemory for a circuit of curve id.
func SetupMemoryOn(id curve.ID, constraints, wires int) int64 {
	m := SetupMemory(constraints, wires)
	if id == curve.BLS12_381 {
		m = m / 5 * setupBLS12381Fifths
	}
	return m
}

// domainOf is gnark's FFT domain for n constraints: n rounded up to a power
// of two (fft.NewDomain).
func domainOf(n int) int64 { return int64(1) << bits.Len64(uint64(max(n, 1)-1)) }

// CheckSetup refuses a setup of a BN254 circuit with this many constraints and
// wires that cannot run here: a domain over 2^MaxLogDomain, or a peak
// memory (SetupMemory) over allow, the bytes this process may use
// (mem.ReadMachine().Limit; 0 means no figure is known). The error wraps
// ErrTooLarge and names both figures.
func CheckSetup(constraints, wires int, allow int64) error {
	return checkSetupOn(curve.BN254, constraints, wires, allow)
}

func checkSetupOn(id curve.ID, constraints, wires int, allow int64) error {
	if err := checkDomain(constraints); err != nil {
		return fmt.Errorf("setup of %w", err)
	}
	if need := SetupMemoryOn(id, constraints, wires); allow > 0 && need > allow {
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

// CheckSetupOf is CheckSetup for a compiled constraint system, by its
// curve's model (SetupMemoryOn).
func CheckSetupOf(ccs constraint.ConstraintSystem, allow int64) error {
	wires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
	id := curve.BN254
	if ccs.Field().Cmp(curve.BLS12_381.ECC().ScalarField()) == 0 {
		id = curve.BLS12_381
	}
	return checkSetupOn(id, ccs.GetNbConstraints(), wires, allow)
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
