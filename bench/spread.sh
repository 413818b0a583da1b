#!/usr/bin/env bash
# Work spread inside one proof (issue 26 item 5) on the H200 machine: the
# transfer's classification in parts against one goroutine a query, whether
# the transfer waits for the device's kernels (per curve), and how many
# cores one proof's solve and classification keep busy. Test binaries built
# elsewhere (no Go toolchain needed on the machine):
#   CGO_ENABLED=0 go test -c -o .carry-lead/gpu.test ./gpu
#   CGO_ENABLED=0 go test -c -o .carry-lead/solve.test ./source/gnarksrc/solve/bn254
#   CGO_ENABLED=0 go test -c -o .carry-lead/proofdata.test ./proofdata
# Usage: bench/spread.sh BINDIR LIB OUTDIR
# (LIB: libzkpipe_cuda.so; the gpu benchmarks skip without it.)
set -uo pipefail
bin=$1 lib=$2 out=$3
mkdir -p "$out"
export ZKPIPE_CUDA_LIB=$lib
# serial (one goroutine a query, main's way) against parts (GOMAXPROCS shared)
"$bin/gpu.test" -test.run '^$' -test.bench 'CUDATransfer' -test.benchtime 20x -test.cpu 2,16 -test.timeout 500s 2>&1 |
	tee "$out/transfer.log" | grep -E "^Benchmark|FAIL|panic"
"$bin/proofdata.test" -test.run '^$' -test.bench 'Classify' -test.benchtime 10x -test.cpu 1,4,16 2>&1 |
	tee "$out/classify.log" | grep -E "^Benchmark|FAIL"
"$bin/solve.test" -test.run '^$' -test.bench 'Solve/.*/2\^2[02]' -test.benchtime 3x -test.cpu 1,4,16 -test.timeout 500s 2>&1 |
	tee "$out/solve.log" | grep -E "^Benchmark|FAIL"
