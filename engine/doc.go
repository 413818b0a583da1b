// Package engine proves continuous streams of Groth16 proofs (BN254 and
// BLS12-381, on the CPU and on CUDA GPUs alike: the curve is each
// circuit's, and one stream may mix them) for gnark and circom circuits
// through zkpipe's eight-stage pipeline — parse,
// synthesize, pin/transfer, NTT+MSM_H, batch-addition, tail-MSM, B_G2 and
// assemble — on the CPU or a CUDA GPU, under a memory governor. It is what
// `zkpipe prove` runs, what the fleet's workers run, and what a Go program
// uses to prove its own circuits.
//
// # Using it
//
//  1. Load circuits: gnarksrc.LoadDir reads a directory of circuit.r1cs,
//     circuit.pk and circuit.vk (the key's bases are read when New or
//     AddCircuit loads the circuit: on a GPU, streamed from the file
//     straight to the device, so keep the files in place until then);
//     gnarksrc.New takes a constraint system and keys already in memory;
//     circomsrc.LoadFiles reads a snarkjs zkey (and its witness calculator;
//     the zkey's bases, likewise, at the circuit's load: keep it in place).
//  2. Register your circuit's hints with gnark (solver.RegisterHint) before
//     the first job, or give them to the source (gnarksrc.Options.Hints):
//     zkpipe solves with gnark's solver, which finds hints by their
//     registration. gnark's standard library's hints are registered already.
//  3. Open an engine with New and the Options you need. The zero Options
//     prove on the GPU if a CUDA library and a GPU are found, else on the
//     CPU, in a shape (workers and queue per stage) chosen from the cores
//     and devices and adapted while it runs (Options.FixedShape), into the
//     directory "out", which the engine locks; with Options.Output (a
//     blob.Writer: blob.Memory, your object store) the outputs go there
//     instead and the engine opens no directory at all. New makes the
//     circuits' keys resident once; later circuits join with AddCircuit,
//     also while a run goes on.
//  4. Feed jobs to Run on a channel (or Stream from a reader of JSON lines),
//     and take each result line in the emit callback: the paths of the proof
//     and its public inputs, or the error that ended the job. Every proof
//     written has been checked against the circuit's verifying key.
//     Or prove one witness in memory with Prove, gnark's
//     groth16.Prove(ccs, pk, w) on the resident engine: a witness.Witness
//     in, a checked groth16.Proof out, no files; safe from many goroutines
//     and beside a Run (circomsrc.ProveWtns(ctx, engine, …) is the same for
//     circom: the wires in, a proof and public inputs out, as snarkjs writes
//     them; the engine knows no source). Run may be
//     called again once it has returned.
//  5. Close the engine.
//
// A job is a stream.Request: an id (it names the output files), the
// circuit's name (optional with one circuit) and a witness file in gnark's
// binary encoding (witness.MarshalBinary), or for circom a .wtns file or the
// circuit's inputs. A job given to Run may carry its witness file's bytes
// in hand instead (stream.Line.Witness, read with the file's bounds) and a
// writer of its own for its outputs (stream.Line.Out): a fleet worker's
// jobs touch no disk. A bad job fails alone with an error naming it; the
// stream goes on. A request of partitions (stream.Request.Partitions: k
// witnesses of one circuit) is k jobs "ID/0" … "ID/k−1", each admitted and
// failing alone, answered by one result line holding k proofs
// (partitions.go).
//
// The example below defines a circuit with a hint of its own, sets it up,
// and proves a stream of four witnesses, each proof verified by gnark;
// Engine.Prove's example proves two in memory.
package engine
