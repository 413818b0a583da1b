#!/usr/bin/env bash
# The circom benchmark on the H200 machine: run from the repository root
# there, with .cache/gpu-bench carried from the development machine, made by
#
#   bash bench/circom/run.sh prepare
#   bash bench/circom/device.sh pack      # here: binaries, zkey, 2 witnesses (about 47 MiB)
#
# and then, on the H200 machine:
#
#   bash bench/circom/device.sh run       # nvcc the CUDA backend, measure cpu and cuda
#                                         # (ZKPIPE_CUDA_LIB=… an existing build: no nvcc)
#
# The device has no node: snarkjs is not timed there (its ratio comes from
# the development machine); the proofs are checked with zkpipe verify.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
G=.cache/gpu-bench
cd "$ROOT"
case "${1:-}" in
pack)
	set -e
	B=${WORK:-.cache/bench-circom}
	rm -rf $G && mkdir -p $G/w $G/chain_js
	cp $B/chain.zkey $B/verification_key.json $G/
	cp $B/chain_js/chain.wasm $G/chain_js/
	cp $B/w/w0.wtns $B/w/w1.wtns $G/w/
	CGO_ENABLED=0 go build -ldflags="-s -w" -o $G/zkpipe .
	gzip $G/zkpipe
	(cd bench/rapidsnark && go build -o "$ROOT/$G/rapidsnark-bench" .)
	du -sh $G
	;;
run)
	OUT=${OUT:-/tmp/zkout}
	mkdir -p "$OUT"
	gunzip -c $G/zkpipe.gz > $G/zkpipe && chmod +x $G/zkpipe
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	devs=cpu
	t0=$(date +%s)
	if [[ -n "${ZKPIPE_CUDA_LIB:-}" && -f "${ZKPIPE_CUDA_LIB:-}" ]]; then
		echo "CUDA library: $ZKPIPE_CUDA_LIB (built before: no nvcc)"
		devs="cpu cuda"
	elif gpu/cuda/build.sh > "$OUT/nvcc.log" 2>&1; then
		echo "nvcc: $(($(date +%s) - t0)) s"
		export ZKPIPE_CUDA_LIB=$ROOT/gpu/cuda/libzkpipe_cuda.so
		devs="cpu cuda"
	else
		echo "nvcc failed; zkpipe on the CPU only:"
		tail -5 "$OUT/nvcc.log"
	fi
	WORK=$G ZKPIPE_BIN=$ROOT/$G/zkpipe RAPIDSNARK_BIN=$ROOT/$G/rapidsnark-bench PROOFS=2 REPEAT=${REPEAT:-16} \
		ZKPIPE_DEVICES=${ZKPIPE_DEVICES:-$devs} bash bench/circom/run.sh measure 2>&1 | tee "$OUT/bench.log"
	for d in $G/out-*; do
		[[ -f $d/results.jsonl ]] && cp $d/results.jsonl "$OUT/$(basename $d).results.jsonl"
	done
	;;
*) echo "usage: $0 pack|run" >&2; exit 2 ;;
esac
