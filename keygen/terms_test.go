package keygen

import (
	"testing"

	"github.com/consensys/gnark/constraint"
	blscs "github.com/consensys/gnark/constraint/bls12-381"
	bncs "github.com/consensys/gnark/constraint/bn254"
)

// collectTerms makes each bucket at its length (no append's growth: at
// 2^27 that was gigabytes beside the circuit), and its buckets hold every
// nonzero term of the system once, under its matrix and wire range.
func TestTermsAreExact(t *testing.T) {
	for _, id := range BothCurves {
		for _, c := range Cases(t, id) {
			var sys *constraint.System
			switch r := c.CCS.(type) {
			case *bncs.R1CS:
				sys = &r.System
			case *blscs.R1CS:
				sys = &r.System
			default:
				t.Fatalf("a %T", c.CCS)
			}
			nbWires := c.CCS.GetNbInternalVariables() + c.CCS.GetNbPublicVariables() + c.CCS.GetNbSecretVariables()
			tm, err := collectTerms(sys, nbWires)
			if err != nil {
				t.Fatal(err)
			}
			var counted [3]int
			for m := range tm.byChunk {
				for _, chunk := range tm.byChunk[m] {
					for r, b := range chunk {
						if cap(b) != len(b) {
							t.Fatalf("%s/%s: matrix %d, range %d: %d terms in room for %d", id, c.Name, m, r, len(b), cap(b))
						}
						for _, x := range b {
							if int(x.coeff>>matrixShift) != m || int(x.wire)/tm.span != r {
								t.Fatalf("%s/%s: a term of matrix %d, wire %d in matrix %d's range %d", id, c.Name, x.coeff>>matrixShift, x.wire, m, r)
							}
						}
						counted[m] += len(b)
					}
				}
			}
			var want [3]int
			it := c.CCS.(interface{ GetR1CIterator() constraint.R1CIterator }).GetR1CIterator()
			for r := it.Next(); r != nil; r = it.Next() {
				for m, le := range [3]constraint.LinearExpression{r.L, r.R, r.O} {
					for _, x := range le {
						if x.CID != constraint.CoeffIdZero {
							want[m]++
						}
					}
				}
			}
			if counted != want {
				t.Fatalf("%s/%s: %v terms by matrix, the system has %v", id, c.Name, counted, want)
			}
		}
	}
}
