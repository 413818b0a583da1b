package stages

import (
	"math"
	"math/bits"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/proofdata"
)

// Footprint estimates the bytes a job of c holds at its peak, from admission
// to the end of the job: the largest of its three phases (see footprint).
func (c *Circuit) Footprint() int64 {
	f := c.footprint()
	return max(f.synth, f.ntt, f.tail)
}

// footprint is what one job of c holds on the host in each phase, as the CPU
// backend allocates it (a device backend holds less on the host, so this
// errs on the safe side there). Pooled buffers count at their capacity class
// (the next power of two), n is the domain size, fr = 32 bytes (both
// curves), points the circuit's curve's (curve.Params).
//
//	synth (synthesize, pin/transfer): W and the solver's flags (33 B a wire,
//	      pooled), a, b, c (pooled: capacity n), the classified queries, and
//	      what the source's Synthesize holds beside them (SynthesisBytes)
//	ntt   (NTT+MSM_H): a, b, c, the queries, the three padded copies the NTTs
//	      work on (h is one of them), and the scratch of h's MSM
//	tail  (batch-add to assemble): the queries, and the largest of one tail
//	      MSM's gathered bases and scratch (G1, or G2 for B)
type footprint struct{ synth, ntt, tail int64 }

func (c *Circuit) footprint() footprint {
	p := c.Key.Curve.Params()
	g1, g2, bits := int64(p.G1AffineBytes), int64(p.G2AffineBytes), p.ScalarBits
	const fr = int64(proofdata.ScalarBytes)
	n := c.Key.N()
	abc := 3 * int64(n) * fr
	var queries int64
	for _, sel := range [][]uint32{c.Sel.A, c.Sel.B, c.Sel.K} {
		q := len(sel)
		queries += mem.ClassBytes[proofdata.Scalar](q) + mem.ClassBytes[uint32](q) + mem.ClassBytes[uint64]((q+63)/64)
	}
	nb, ng1 := len(c.Sel.B), max(len(c.Sel.A), len(c.Sel.B), len(c.Sel.K))
	tail := max(classBytes(ng1, g1)+msmScratch(ng1, g1, bits), classBytes(nb, g2)+msmScratch(nb, g2, bits))
	return footprint{
		synth: mem.ClassBytes[proofdata.Scalar](c.NbWires) + mem.ClassBytes[bool](c.NbWires) + abc + queries + c.SynthesisBytes,
		ntt:   abc + queries + 3*int64(n)*fr + msmScratch(n, g1, bits),
		tail:  queries + tail,
	}
}

// classBytes is mem.ClassBytes for n elements of size bytes each (a pooled
// buffer of points whose type only the curve's code names).
func classBytes(n int, size int64) int64 {
	if n <= 0 {
		return 0
	}
	return size << bits.Len(uint(n-1))
}

// msmScratch is what gnark-crypto's MultiExp allocates for n scalars of
// scalarBits over points of the given affine size, with its window c
// chosen as it does (cost (scalarBits+1)(n+2^c)/c over c = 4…16):
//
//   - digits: a 16-bit signed digit per window of each scalar, 32 B a scalar
//     at 2^22 points (c = 16), about 74 at 2^10;
//   - buckets: each window's goroutine keeps 2^(c−1) buckets in affine and in
//     extended Jacobian coordinates (3× the affine size) on its stack, which
//     grows in powers of two: 8 MiB a window in G1 at c = 16, 128 MiB for the
//     16 windows if all run at once (they may, with enough tasks).
func msmScratch(n int, affine int64, scalarBits int) int64 {
	if n == 0 {
		return 0
	}
	c, bestCost := 16, math.MaxFloat64
	for w := 4; w <= 16; w++ {
		if cost := float64((scalarBits+1)*(n+1<<w)) / float64(w); cost < bestCost {
			c, bestCost = w, cost
		}
	}
	windows := int64((scalarBits + c - 1) / c)
	stack := int64(1) << bits.Len64(uint64((int64(1)<<(c-1))*3*affine-1))
	return int64(n)*2*windows + windows*stack
}

// Sizes the stages hand back as they finish, against Footprint: after
// pin/transfer (W is dead) the job needs only its later phases' peak, and
// after NTT+MSM_H (a, b, c and the padded copies are dead) only the tail's.
func (c *Circuit) wireBytes() int64 {
	f := c.footprint()
	return max(f.synth, f.ntt, f.tail) - max(f.ntt, f.tail)
}

func (c *Circuit) nttBytes() int64 {
	f := c.footprint()
	return max(f.ntt, f.tail) - f.tail
}
