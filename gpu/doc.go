// Package gpu is zkpipe's compute backend: the multi-scalar multiplications
// and NTTs of a Groth16 proof, behind the few operations package stages
// declares in its Backend interface.
//
// CPU is the reference implementation, on gnark-crypto. The CUDA backend (built
// from gpu/cuda with nvcc, loaded at run time) implements the same operations
// and passes the same tests.
//
// The values they read and return (proofdata.Key, Vectors, Staged, G1Sums)
// are package proofdata's, shared with the sources and the stages.
package gpu
