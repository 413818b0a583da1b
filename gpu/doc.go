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
//
// Configuration comes in as values: the CUDA backend takes a CUDAConfig
// (WithConfig), which OpenCUDA gives to the library's zk_init
// (gpu/cuda/zkpipe.h, zk_config) for the device it opens; this package and
// its library read no environment variables. The zkpipe command fills the
// config from its flags and variables (commands/cudaenv.go).
package gpu
