#!/usr/bin/env bash
# The circom benchmark on the H200 machine: run from the repository root
# there, with the circuit's pack carried from the development machine
# (.cache/gpu-bench for CIRCUIT=chain, the default; .cache/gpu-bench-sha256
# for CIRCUIT=sha256: both zkeys together would not fit a device call's 64
# MiB), made by
#
#   CIRCUIT=… bash bench/circom/run.sh prepare
#   CIRCUIT=… bash bench/circom/device.sh pack   # here: binaries, zkey, wasm, 2 witnesses (about 50 MiB)
#
# and then, on the H200 machine:
#
#   CIRCUIT=… bash bench/circom/device.sh run    # nvcc the CUDA backend, measure cpu and cuda
#                                                # (ZKPIPE_CUDA_LIB=… an existing build: no nvcc)
#
# The device has no node: snarkjs is not timed there (its ratio comes from
# the development machine); the proofs are checked with zkpipe verify.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CIRCUIT=${CIRCUIT:-chain}
case $CIRCUIT in
chain) G=.cache/gpu-bench B=${WORK:-.cache/bench-circom} ;;
sha256) G=.cache/gpu-bench-sha256 B=${WORK:-.cache/bench-circom-sha256} ;;
*) echo "CIRCUIT=$CIRCUIT: want chain or sha256" >&2; exit 2 ;;
esac
C=$CIRCUIT
cd "$ROOT"
case "${1:-}" in
pack)
	set -e
	rm -rf $G && mkdir -p $G/w $G/${C}_js
	cp $B/$C.zkey $B/verification_key.json $G/
	cp $B/${C}_js/$C.wasm $G/${C}_js/
	cp $B/w/w0.wtns $B/w/w1.wtns $G/w/
	gzip $G/w/*.wtns # SHA-256's are nearly all 0s and 1s: 4 MB to 0.3
	CGO_ENABLED=0 go build -ldflags="-s -w" -o $G/zkpipe .
	gzip $G/zkpipe
	(cd bench/rapidsnark && go build -o "$ROOT/$G/rapidsnark-bench" .)
	du -sh $G
	echo "carry: [\"$G\"] (and the CUDA library's path); command: CIRCUIT=$C bash bench/circom/device.sh run"
	;;
run)
	OUT=${OUT:-/tmp/zkout}
	mkdir -p "$OUT"
	gunzip -c $G/zkpipe.gz > $G/zkpipe && chmod +x $G/zkpipe
	for z in $G/w/*.wtns.gz; do gunzip -c "$z" > "${z%.gz}"; done
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	devs=cpu
	t0=$(date +%s)
	if [[ -n "${ZKPIPE_CUDA_LIB:-}" && -f "${ZKPIPE_CUDA_LIB:-}" ]]; then
		# absolute: run.sh runs zkpipe from inside the pack
		export ZKPIPE_CUDA_LIB=$(cd "$(dirname "$ZKPIPE_CUDA_LIB")" && pwd)/$(basename "$ZKPIPE_CUDA_LIB")
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
	CIRCUIT=$C WORK=$G ZKPIPE_BIN=$ROOT/$G/zkpipe RAPIDSNARK_BIN=$ROOT/$G/rapidsnark-bench PROOFS=2 REPEAT=${REPEAT:-16} \
		ZKPIPE_DEVICES=${ZKPIPE_DEVICES:-$devs} bash bench/circom/run.sh measure 2>&1 | tee "$OUT/bench.log"
	for d in $G/out-*; do
		[[ -f $d/results.jsonl ]] && cp $d/results.jsonl "$OUT/$(basename $d).results.jsonl"
	done
	;;
*) echo "usage: $0 pack|run" >&2; exit 2 ;;
esac
