// Package proofdata is the data model shared by the circuit sources, the
// stages and the compute backends: what a Groth16 proof's MSMs and NTTs
// read and return, and nothing that computes them.
//
// Data flow for one proof:
//
//	Key      — a circuit's bases, made resident once by a backend's Load (shared by all jobs)
//	Vectors  — one proof's a, b, c and its classified scalars (host memory)
//	Staged   — the Vectors as a device holds them, from Transfer until Free
//	G1Sums   — one partial result per G1 query (batch sums of ones, tails)
//
// The package names no curve. Scalars are curve-neutral (Scalar: both
// curves' Fr are four Montgomery words); points are the curve's own
// gnark-crypto types behind Key.Bases (Bases[G1, G2, D]) and Point, made
// and read only by the curve's generated code (notes/curve-seam.md).
package proofdata
