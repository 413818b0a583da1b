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

// footprint is what one job of c holds on the host in each phase, on the
// backends c.Host describes. Pooled buffers count at their capacity class
// (the next power of two), n is the domain size, fr = 32 bytes (both
// curves), points the circuit's curve's (curve.Params).
//
// On the CPU backend (c.Host's zero value), which holds everything there:
//
//	synth (synthesize, pin/transfer): W and the solver's flags (33 B a wire,
//	      pooled), a, b, c (pooled: capacity n), the classified queries, and
//	      what the source's Synthesize holds beside them (SynthesisBytes)
//	ntt   (NTT+MSM_H): a, b, c, the queries, the three padded copies the NTTs
//	      work on (h is one of them), and the scratch of h's MSM
//	tail  (batch-add to assemble): the queries, and the largest of one tail
//	      MSM's gathered bases and scratch (G1, or G2 for B)
//
// On a backend that stages on its device (Host.DeviceG1: gpu.CUDA), the
// host holds W, the flags, a, b, c and SynthesisBytes until pin/transfer,
// and nothing of the job after, but for B's query and the CPU's G2 MSM
// (its gathered bases and scratch) when B_G2 runs on the CPU
// (!Host.DeviceG2). The device's share is the backend's JobBytes.
type footprint struct{ synth, ntt, tail int64 }

func (c *Circuit) footprint() footprint {
	p := c.Key.Curve.Params()
	g1, g2, bits := int64(p.G1AffineBytes), int64(p.G2AffineBytes), p.ScalarBits
	const fr = int64(proofdata.ScalarBytes)
	n := c.Key.N()
	abc := 3 * int64(n) * fr
	query := func(q int) int64 {
		return mem.ClassBytes[proofdata.Scalar](q) + mem.ClassBytes[uint32](q) + mem.ClassBytes[uint64]((q+63)/64)
	}
	wires := mem.ClassBytes[proofdata.Scalar](c.NbWires) + mem.ClassBytes[bool](c.NbWires) + c.SynthesisBytes
	nb := len(c.Sel.B)
	g2Tail := classBytes(nb, g2) + msmScratch(nb, g2, bits)
	if c.Host.DeviceG1 {
		if c.Host.DeviceG2 {
			return footprint{synth: wires + abc}
		}
		qb := query(nb)
		return footprint{synth: wires + abc + qb, ntt: qb, tail: qb + g2Tail}
	}
	var queries int64
	for _, sel := range [][]uint32{c.Sel.A, c.Sel.B, c.Sel.K} {
		queries += query(len(sel))
	}
	ng1 := max(len(c.Sel.A), len(c.Sel.B), len(c.Sel.K))
	tail := max(classBytes(ng1, g1)+msmScratch(ng1, g1, bits), g2Tail)
	return footprint{
		synth: wires + abc + queries,
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

// msmScratch is the scratch an MSM of n scalars of scalarBits over points
// of the given affine size uses (gnark-crypto's MultiExp, and the CPU
// backend's cpumsm, which follows it), with its window c chosen as they do
// (cost (scalarBits+1)(n+2^c)/c over c = 4…16):
//
//   - digits: a 16-bit signed digit per window of each scalar, 32 B a scalar
//     at 2^22 points (c = 16), about 74 at 2^10;
//   - buckets: each window keeps 2^(c−1) buckets in affine and in extended
//     Jacobian coordinates (3× the affine size), counted here as
//     gnark-crypto's goroutine stacks that grow in powers of two: 8 MiB a
//     window in G1 at c = 16, 128 MiB for the 16 windows if all run at once
//     (they may, with enough tasks).
//
// cpumsm keeps these between MSMs (gpu.CPU.MSMScratchBytes): a warm job's
// MSM reuses them, and then they are in the measured RSS and in this
// reservation at once; the governor takes the larger of the measured and
// the promised bytes, not their sum, so they are not added twice. A job
// still reserves them because a cold MSM, or one beyond the kept bound,
// allocates its own.
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
// pin/transfer (W is dead, and a, b, c too where the device holds them)
// the job needs only its later phases' peak, and after NTT+MSM_H (a, b, c
// and the padded copies are dead) only the tail's.
func (c *Circuit) wireBytes() int64 {
	f := c.footprint()
	return max(f.synth, f.ntt, f.tail) - max(f.ntt, f.tail)
}

func (c *Circuit) nttBytes() int64 {
	f := c.footprint()
	return max(f.ntt, f.tail) - f.tail
}
