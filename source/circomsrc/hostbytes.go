package circomsrc

import (
	"unsafe"

	"github.com/zkpipe/zkpipe/proofdata"
)

// HostBytes is what the source keeps on the host beside the circuit's Key
// (stages.Source.HostBytes): the zkey's A and B coefficients in coordinate
// form (row, wire and value: 40 B each) and, when given, the r1cs's
// constraints (three slice headers, 36 B a term). The witness calculator's
// compiled module is not counted; its instances' memory is each job's
// (Circuit.SynthesisBytes).
func (s *Source) HostBytes() int64 {
	var n int64
	for _, c := range s.zkey.Coefs {
		n += int64(cap(c.Row)+cap(c.Wire))*4 + int64(cap(c.Value))*proofdata.ScalarBytes
	}
	if s.r1cs != nil {
		var c Constraint
		var t Term
		n += int64(cap(s.r1cs.Constraints)) * int64(unsafe.Sizeof(c))
		for _, c := range s.r1cs.Constraints {
			n += int64(cap(c.A)+cap(c.B)+cap(c.C)) * int64(unsafe.Sizeof(t))
		}
	}
	return n
}
