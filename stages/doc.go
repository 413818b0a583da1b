// Package stages holds zkpipe's Groth16 stages, one file per stage, the
// Job that flows through them, the Circuit and Source they read, and the
// Backend they run on (the whole contract every compute backend
// satisfies). Each stage is a method of Steps, math on one job; package
// package engine assembles them into a pipeline (its Core) (with the circuits, the pools
// and the admissions), and package pipeline owns the goroutines, queues,
// timings and panics.
//
//	parse        parse.go       resolve the circuit, read or generate the witness, check sizes
//	synthesize   synthesize.go  solve the R1CS: W, and a = A·W, b = B·W, c = C·W
//	pin/transfer transfer.go    classify the A, B, K scalars (zero / one / significant), stage on the device
//	NTT+MSM_H    ntt.go         h = (a·b − c)/Z, and its MSM against the H query
//	batch-add    batchadd.go    Σ bases whose scalar is one, for A, B₁, K and B₂
//	tail-MSM     tailmsm.go     MSM of the significant scalars of A, B₁, K
//	B_G2         bg2.go         the G2 MSM of B
//	assemble     assemble.go    A, B, C from the parts and fresh r, s; write the proof
//
// Notation follows gnark's prover (DIZK, Figure 4): Ar = [A]₁, Bs = [B]₂,
// Krs = [C]₁.
package stages
