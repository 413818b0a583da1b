package circomsrc

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// R1CS is a circom constraint system (.r1cs, version 1):
//
//	1 header       n8 u32, prime (n8 bytes), nWires u32, nPubOut u32,
//	               nPubIn u32, nPrvIn u32, nLabels u64, nConstraints u32
//	2 constraints  nConstraints × (A, B, C), each a linear combination:
//	               nTerms u32, nTerms × {wire u32, value (n8 bytes, standard form)}
//	3 wire→label   nWires × u64 (not kept)
//
// Custom-gate sections (PLONK only) are ignored. Wire 0 is the one wire, then
// the public outputs, the public inputs, the private inputs, the rest.
type R1CS struct {
	Curve                           curve.ID // the one whose r is the header's prime
	NWires, NPubOut, NPubIn, NPrvIn int
	Constraints                     []Constraint
}

// Constraint is ⟨A,W⟩·⟨B,W⟩ = ⟨C,W⟩.
type Constraint struct{ A, B, C []Term }

// Term is one coefficient of a linear combination, its value in Montgomery
// form of the circuit's Fr.
type Term struct {
	Wire  uint32
	Value proofdata.Scalar
}

// NPublic counts the public wires past the one wire (outputs and inputs), as
// a zkey's nPublic does.
func (r *R1CS) NPublic() int { return r.NPubOut + r.NPubIn }

// ReadR1CSFile reads and checks a .r1cs file, bounded as LoadFiles reads it.
func ReadR1CSFile(path string) (*R1CS, error) {
	return readR1CSFile(context.Background(), path, Files{})
}

func readR1CSFile(ctx context.Context, path string, o Files) (*R1CS, error) {
	// circom writes the constraints (2) before the header (1) that sizes
	// them: from a pipe they are held, within the machine's memory, until
	// the header has been read and checked them
	return readBinPath(ctx, path, "r1cs", 1, boundedread.MachineMemory(), o, types(1, 2), parseR1CS)
}

// ParseR1CS parses a .r1cs held in memory, checking the header's counts,
// that every term names a wire of the circuit with a value below r, and that
// the constraints section holds exactly its constraints.
func ParseR1CS(data []byte) (*R1CS, error) {
	f, err := parseBinFile(data, "r1cs", 1)
	if err != nil {
		return nil, err
	}
	return parseR1CS(f)
}

func parseR1CS(f *binFile) (*R1CS, error) {
	// n8, a prime of n8 bytes, four u32 counts, a u64, a u32: n8 + 32 bytes
	h, err := f.sectionBy(1, "header", 4, func(head []byte) boundedread.Need {
		n8 := binary.LittleEndian.Uint32(head)
		return boundedread.Exactly(boundedread.Items(uint64(n8), 1, 32), fmt.Sprintf("a %d-byte prime and its counts", n8))
	})
	if err != nil {
		return nil, err
	}
	cc := h.field("field", false)
	c := &R1CS{NWires: int(h.u32()), NPubOut: int(h.u32()), NPubIn: int(h.u32()), NPrvIn: int(h.u32())}
	h.u64() // labels
	m := h.u32()
	if err := h.done(); err != nil {
		return nil, err
	}
	c.Curve = cc.id()
	if c.NWires < 1 || c.NWires > 1<<31-1 || 1+c.NPubOut+c.NPubIn+c.NPrvIn > c.NWires {
		return nil, fmt.Errorf("r1cs: %d wires cannot hold 1 + %d outputs + %d public and %d private inputs", c.NWires, c.NPubOut, c.NPubIn, c.NPrvIn)
	}
	// Each constraint is three linear combinations, each a count and at
	// most one term a wire (circom merges a wire's terms): 12 bytes (all
	// empty) to 3·(4 + nWires·(4+32)); the section must be within, before
	// it is read. The wire→label section is nWires u64s (not kept, not
	// read).
	perLC := boundedread.Items(uint64(c.NWires), 4+32, 4)
	r, err := f.section(2, "constraints", boundedread.Between(boundedread.Items(uint64(m), 12, 0),
		boundedread.Items(uint64(m), uint64(boundedread.Items(3, uint64(perLC), 0)), 0), fmt.Sprintf("%d constraints over %d wires", m, c.NWires)))
	if err != nil {
		return nil, err
	}
	if _, _, err := f.span(3, "wire→label", boundedread.Exactly(boundedread.Items(uint64(c.NWires), 8, 0), fmt.Sprintf("%d labels", c.NWires))); err != nil {
		return nil, err
	}
	c.Constraints = make([]Constraint, m)
	lc := func(k uint32) []Term {
		n := r.u32()
		switch {
		case r.err != nil:
		case n > uint32(c.NWires):
			r.err = fmt.Errorf("r1cs: constraints section: constraint %d: %d terms, more than the %d wires (circom writes a wire once)", k, n, c.NWires)
		case uint64(n)*36 > uint64(len(r.b)):
			r.err = fmt.Errorf("r1cs: constraints section: constraint %d: %d terms need %d bytes, %d remain", k, n, uint64(n)*36, len(r.b))
		}
		if r.err != nil {
			return nil
		}
		ts := make([]Term, n)
		for i := range ts {
			ts[i].Wire = r.u32()
			ts[i].Value = cc.scalar(r, item{"a coefficient of constraint", int(k)})
			if r.err == nil && int(ts[i].Wire) >= c.NWires {
				r.err = fmt.Errorf("r1cs: constraint %d: wire %d of %d", k, ts[i].Wire, c.NWires)
			}
		}
		return ts
	}
	for k := range c.Constraints {
		cs := &c.Constraints[k]
		cs.A, cs.B, cs.C = lc(uint32(k)), lc(uint32(k)), lc(uint32(k))
		if r.err != nil {
			return nil, r.err
		}
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return c, nil
}

// Check returns an error naming the first constraint w does not satisfy.
func (r *R1CS) Check(w []proofdata.Scalar) error {
	if len(w) != r.NWires {
		return fmt.Errorf("witness of %d wires, the r1cs has %d", len(w), r.NWires)
	}
	if k := curveOf(r.Curve).check(r, w); k >= 0 {
		return fmt.Errorf("the witness does not satisfy constraint %d of %d", k, len(r.Constraints))
	}
	return nil
}
