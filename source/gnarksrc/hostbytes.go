package gnarksrc

import (
	"unsafe"

	"github.com/consensys/gnark/constraint"
	csbls12381 "github.com/consensys/gnark/constraint/bls12-381"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/zkpipe/zkpipe/proofdata"
)

// HostBytes is the R1CS's host memory (stages.Source.HostBytes): its
// packed instructions, their call data, the solver's levels and the
// coefficient table, at their capacities. Measured, the live heap of a
// loaded bits circuit beside its key and selections is 84.5 B a
// constraint at 2^18 (86.2 at 2^16); this counts 80.4 of them, leaving
// out the wire names, the debug tables and the key's infinity flags.
func (s *Source) HostBytes() int64 { return r1csBytes(s.ccs) }

func r1csBytes(ccs constraint.ConstraintSystem) int64 {
	var sys *constraint.System
	var coeffs int
	switch r := ccs.(type) {
	case *csbn254.R1CS:
		sys, coeffs = &r.System, cap(r.Coefficients)
	case *csbls12381.R1CS:
		sys, coeffs = &r.System, cap(r.Coefficients)
	default:
		return 0
	}
	var pi constraint.PackedInstruction
	n := int64(cap(sys.Instructions))*int64(unsafe.Sizeof(pi)) + int64(cap(sys.CallData))*4 + int64(coeffs)*proofdata.ScalarBytes
	for _, l := range sys.Levels {
		n += int64(cap(l))*4 + int64(unsafe.Sizeof(l))
	}
	return n
}
