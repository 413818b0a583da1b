// Package gpu is zkpipe's compute backend: the multi-scalar multiplications
// and NTTs of a Groth16 proof, behind the few operations package stages
// declares in its Backend interface.
//
// CPU is the reference implementation, on gnark-crypto. The CUDA backend (built
// from gpu/cuda with nvcc, loaded at run time) implements the same operations
// and passes the same tests.
//
// Data flow for one proof:
//
//	Key      — a circuit's bases, made resident once by Load (shared by all jobs)
//	Vectors  — one proof's a, b, c and its classified scalars (host memory)
//	Staged   — the Vectors as the device holds them, from Transfer until Free
//
// Configuration comes in as values: the CUDA backend takes a CUDAConfig
// (WithConfig), which OpenCUDA gives to the library's zk_init
// (gpu/cuda/zkpipe.h, zk_config) for the device it opens; this package and
// its library read no environment variables. The zkpipe command fills the
// config from its flags and variables (commands/cudaenv.go).
package gpu
