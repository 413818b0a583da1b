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
// circuit.r1cs written, keygen.Setup, the key's files streamed), BN254,
// with W wires, n constraints and the domain d = n rounded up to a power
// of two. What is live at the peak, the last products, from keygen's code:
//
//	the r1cs       instructions, coefficient table, levels    ~100–400 B a wire (mulchain's
//	                                                           distinct coefficients the most)
//	scalars        B (A, C, K, Z and the terms freed)          32 B a wire
//	points         pk.G1.A, B, K, pk.G2.B                      64·3 + 128 B a wire at most
//	Z              pk.G1.Z                                     64 B a point
//
// and Go's heap slack on top. pk.Domain has no FFT tables
// (keygen.WithoutDomainTables: 128 B a point), circuit.r1cs's encoding is
// done before keygen, and keygen hands each dead buffer back before the
// next (its releaser, from 2^20 wires). Measured peak RSS of `zkpipe
// setup --device cpu` (go 1.26, /usr/bin/time -v, 2 cores), after those
// changes (2026-12-04; `commit` compiles through gnark's frontend, the
// others are built directly, circuits/direct.go):
//
//	                                  W         d       peak    model
//	bits 65520                   65,512    2¹⁶      142 MB   245 MB
//	mulchain 65536               65,538    2¹⁶      150 MB   245 MB
//	commit 262144               524,728    2¹⁹      546 MB   554 MB
//	bits 983040                 984,578    2²⁰      631 MB   869 MB
//	mulchain 983040             983,042    2²⁰      760 MB   868 MB
//	bits 1966080              1,969,154    2²¹     1.05 GB  1.54 GB
//	mulchain 1966080          1,966,082    2²¹     1.31 GB  1.54 GB
//	bits 3932160              3,938,306    2²²     1.87 GB  2.87 GB
//	mulchain 3932160          3,932,162    2²²     2.40 GB  2.87 GB
//	BLS12-381 bits 983040       984,578    2²⁰      860 MB  1.22 GB
//	BLS12-381 mulchain 983040   983,042    2²⁰     1.05 GB  1.22 GB
//
// Before them (the tables built, r1cs beside the key's write, no release)
// bits and mulchain at 983040, 1966080 and 3932160 peaked at 1.04, 1.18,
// 1.76, 2.10, 3.89 and 4.19 GB, and the H200 (GPU products) at 20.3 GB
// for bits 16.8M and 60.8 GB for bits 2²⁶ (W 62.9M): 966 B a wire there,
// 987 B here (bits 3932160), which these changes cut to 475 B here.
//
// The model is setupBaseBytes + setupBytesPerWire·W + setupBytesPerPoint·d:
// 576 + 96 = 672 B a wire and point, over the measured growth from 2²¹
// to 2²² (418 B bits, 555 B mulchain: 21% margin); the base is what the
// commit circuit's frontend compile needs at 2¹⁸. BLS12-381's points are
// 1.5× BN254's and its peaks measured 1.36× and 1.38×: its model is 7/5 of
// this. On the 128 GiB H200 host this allows bits at 2²⁷ (W 125.8M, d
// 2²⁷): about 85.5 GB (79.6 GiB) on BN254, 111.5 GiB on BLS12-381.
const (
	setupBytesPerWire  = 576
	setupBytesPerPoint = 96
	setupBaseBytes     = 192 << 20
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
	if err := b.checkSize(n); err != nil {
		return err
	}
	c, w := b.floor(n)
	if err := CheckSetup(c, w, allow); err != nil {
		return fmt.Errorf("%s at %d constraints: %w", b.Name, n, err)
	}
	return nil
}
