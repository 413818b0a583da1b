#!/bin/bash
# devrun.sh STEP… — run on the H200 machine from the repository root, with
# the Go binaries built on the development machine in .carry/:
#   CGO_ENABLED=0 go test -c -o .carry/gpu.test ./gpu
#   CGO_ENABLED=0 go build -o .carry/zkpipe .
# Steps: build (nvcc), test (GPU tests against the CPU backend, proofs),
# measure (MSM/NTT timings), bench N (zkpipe bench of mulchain and bits at N
# constraints, $PROOFS proofs), prebuilt (no nvcc: use .carry/libzkpipe_cuda.so).
# Logs go to $OUT (or /tmp/zkout).
set -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/zkout}
mkdir -p "$OUT"
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
while [ $# -gt 0 ]; do
	step=$1
	shift
	case $step in
	prebuilt) # use .carry/libzkpipe_cuda.so, built by an earlier run from the same sources
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
		export ZKPIPE_CUDA_LIB=$PWD/.carry/libzkpipe_cuda.so
		;;
	build)
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
		t0=$(date +%s)
		if ! gpu/cuda/build.sh -Xptxas -v >"$OUT/build.log" 2>&1; then
			grep -v "^ptxas info" "$OUT/build.log" | tail -40
			exit 1
		fi
		echo "nvcc: $(($(date +%s) - t0)) s"
		cp gpu/cuda/libzkpipe_cuda.so "$OUT/" 2>/dev/null
		grep -B1 -E "[1-9][0-9]* bytes spill" "$OUT/build.log" | grep -oE "Compiling entry function '[^']+'|[0-9]+ bytes spill stores" | paste - - | head -20
		;;
	test)
		.carry/gpu.test -test.run 'CUDA' -test.v -test.timeout 400s >"$OUT/test.log" 2>&1
		rc=$?
		grep -E "^\s*--- (FAIL|SKIP)|differs|cuda_test.go|^(ok|FAIL|PASS)" "$OUT/test.log" | head -60
		grep -cE "^\s*--- PASS" "$OUT/test.log" | sed 's/^/passed: /'
		echo "test rc=$rc"
		;;
	measure)
		.carry/gpu.test -test.run '^$' -test.bench 'CUDAMeasure' -test.benchtime 1x -test.v -test.timeout 400s 2>&1 | tee "$OUT/measure.log" | grep -vE "^=== RUN"
		;;
	bench)
		n=$1
		shift
		proofs=${PROOFS:-8}
		for c in mulchain bits; do
			.carry/zkpipe setup --builtin $c --constraints "$n" --dir /tmp/circ/$c >"$OUT/setup-$c.log" 2>&1 || { tail -5 "$OUT/setup-$c.log"; continue; }
			.carry/zkpipe bench --circuit /tmp/circ/$c -n "$proofs" --device cuda --bg2-device cuda \
				--parse-workers 2 --synthesize-workers 6 --transfer-workers 3 --assemble-workers 2 2>&1 | tee "$OUT/bench-$c-$n.log" | tail -14
		done
		;;
	esac
done
