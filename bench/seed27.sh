#!/usr/bin/env bash
# The seed's workload on one GPU host (issue 49): requests of ten
# 2^27-constraint partitions of the porep built-in (a Filecoin 32 GiB PoRep
# C2 partition's shape, notes/porep-shape.md) on BLS12-381, from setup to
# verified proofs, with the memory each step holds. Run on the GPU machine
# from the repository root, with the Go binaries built elsewhere
# (CGO_ENABLED=0 go build -o $BIN/zkpipe .; go test -c -o $BIN/gpu.test ./gpu):
#
#   BIN=.carry-s bench/seed27.sh STEP [ARGS]...   (several STEPs: separate them with --)
#
#   build                      libzkpipe_cuda.so with nvcc into $BIN (about 4 min on 16 cores)
#   gputests                   the CUDA tests on the GPU, every proof verified by gnark
#   kernels                    MSM and NTT medians of both curves; a 2^26 G1 MSM in pieces
#                              (the default, 2^24 scalars a run) against one run
#   setup CIRCUIT CURVE LOG    zkpipe setup --builtin CIRCUIT at 2^LOG constraints into
#                              /tmp/zkc/CIRCUIT-CURVE-LOG/CIRCUIT (the GPU's fixed-base products)
#   request DIR N [BUDGET]     N requests of 10 partitions back to back through one zkpipe
#                              prove over DIR (--mem-budget BUDGET: 32GiB, …; default its own);
#                              every proof verified by gnark (zkpipe verify)
#   memory DIR N BUDGET...     request DIR N BUDGET for each BUDGET in turn: cuzk's table
#   bench CIRCUIT CURVE LOG N  zkpipe bench --builtin (keys in memory, never on disk) with
#                              N partitions in one request (bits at 2^27: 63 GiB of keys)
#   solve LOGS                 synthesis of one porep partition of 2^LOG on BLS12-381 for each LOG
#                              of LOGS (24,27): zkpipe's solver and gnark's ccs.Solve in one run,
#                              CPU and wall s; up to 2^25 also four at once, every core each
#                              against a quarter each
#                              (needs $BIN/solve.test: go test -c ./source/gnarksrc/solve/bls12381)
#   summary                    the figures so far
#
# PROVE_FLAGS adds flags to every zkpipe prove (e.g. --cuda-bases host: the
# bases streamed from pinned host memory, as on a card smaller than the
# key), TAG a suffix to the names of its logs.
#
# Each step appends its line to $LOGS/summary.txt (wall seconds, peak RSS of
# the process, minor faults, the GPU's peak memory in use sampled every
# 250 ms); logs and results stay under $LOGS (default /tmp/seed27), which
# `pack` tars into $OUT/seed27-logs.tgz for the device tool to bring back.
set -uo pipefail
BIN=${BIN:-.carry-s}
DEVICE=${DEVICE:-cuda} # cpu: the same steps on a machine without a GPU, to check the script
LOGS=${LOGS:-/tmp/seed27}
Z=/tmp/zkc
mkdir -p "$LOGS" "$Z"
export ZKPIPE_CUDA_LIB=${ZKPIPE_CUDA_LIB:-$PWD/$BIN/libzkpipe_cuda.so}

# measure NAME CMD…: runs CMD with its output in $LOGS/NAME.log; records
# its wall time, peak RSS, CPU and minor faults (getrusage of the child)
# and the GPU's peak memory in use while it ran.
measure() {
	local name=$1
	shift
	nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 250 >"$LOGS/$name.gpumem" 2>/dev/null &
	local smi=$!
	python3 - "$LOGS/$name" "$@" <<'PY'
import resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.time()
with open(out + ".log", "wb") as f:
    rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out + ".rusage", "w") as f:
    f.write("rc=%d wall_s=%.1f peak_rss_gib=%.1f cpu_s=%.0f minflt=%d" % (
        rc, time.time() - t0, ru.ru_maxrss / 2**20, ru.ru_utime + ru.ru_stime, ru.ru_minflt))
sys.exit(rc)
PY
	local rc=$?
	kill "$smi" 2>/dev/null
	wait "$smi" 2>/dev/null
	local gpu
	gpu=$(sort -n "$LOGS/$name.gpumem" 2>/dev/null | tail -1)
	echo "$name: $(cat "$LOGS/$name.rusage") gpu_peak_mib=${gpu:-?}" | tee -a "$LOGS/summary.txt"
	if [ "$rc" != 0 ]; then tail -20 "$LOGS/$name.log"; fi
	return "$rc"
}

# unpack: the carried binaries are xz'd (the tree that travels is at most 64 MiB)
step_unpack() {
	python3 -c '
import lzma, os, shutil, sys
for f in sys.argv[1:]:
    with lzma.open(f) as i, open(f[:-3], "wb") as o:
        shutil.copyfileobj(i, o)
    os.chmod(f[:-3], 0o755)' "$BIN"/*.xz
	ls -la "$BIN"
}

step_build() {
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$LOGS/summary.txt"
	nproc | sed 's/^/cores: /' | tee -a "$LOGS/summary.txt"
	measure build sh -c "OBJ=/tmp/zkobj gpu/cuda/build.sh && cp gpu/cuda/libzkpipe_cuda.so $BIN/"
}

step_gputests() {
	measure gputests timeout 300 "$BIN/gpu.test" -test.count=1 -test.v \
		-test.run 'CUDAMSMPieces|CUDAMatchesCPU$|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDAProofsVerify$|CUDAProofsVerifyBLS12381|CUDATransferClassifyMatchesClassify|CUDADeviceMemory'
	grep -E '^(--- FAIL|FAIL|ok|PASS)' "$LOGS/gputests.log" | tail -5
}

step_kernels() {
	local t=(-test.run '^$' -test.benchtime 1x)
	ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24,26 measure kernels-bls "$BIN/gpu.test" "${t[@]}" -test.bench 'CUDAMeasureBLS12381$'
	ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=26 ZKPIPE_MSM_PIECE_LOG=30 measure kernels-bls-onerun "$BIN/gpu.test" "${t[@]}" -test.bench 'CUDAMeasureBLS12381$'
	ZKPIPE_CUDA_BENCH=1 measure kernels-bn254 "$BIN/gpu.test" "${t[@]}" -test.bench 'CUDAMeasure$'
	grep -hE 'MSM|NTT' "$LOGS"/kernels-*.log | tee -a "$LOGS/summary.txt"
}

step_setup() {
	local circ=$1 curve=$2 lg=$3
	local top=$Z/$circ-$curve-$lg
	rm -rf "$top"
	mkdir -p "$top"
	measure "setup-$circ-$curve-$lg" "$BIN/zkpipe" setup --builtin "$circ" --curve "$curve" \
		--constraints $((1 << lg)) --dir "$top/$circ" --device "$DEVICE" -v
	tail -4 "$LOGS/setup-$circ-$curve-$lg.log"
	{ du -sh "$top/$circ"/* ; df -h /tmp | tail -1; } | tee -a "$LOGS/summary.txt"
}

# jobs FILE CIRCUIT N FIRST: N requests of 10 partitions, seeds from FIRST
jobs() {
	local file=$1 circ=$2 n=$3 first=$4 r i parts
	: >"$file"
	for r in $(seq 0 $((n - 1))); do
		parts=""
		for i in $(seq 0 9); do parts+="${parts:+,}{\"generate\":{\"seed\":$((first + 10 * r + i))}}"; done
		echo "{\"id\":\"req-$r\",\"circuit\":\"$circ\",\"partitions\":[$parts]}" >>"$file"
	done
}

step_request() {
	local dir=$1 n=$2 budget=${3:-}
	local circ name
	circ=$(basename "$dir")
	name=request-$(basename "$(dirname "$dir")")-$n-${budget:-default}${TAG:+-$TAG}
	jobs "$LOGS/$name.jsonl" "$circ" "$n" 1
	rm -rf "/tmp/proofs-$name"
	measure "$name" "$BIN/zkpipe" prove --circuit "$dir" --jobs "$LOGS/$name.jsonl" \
		--out "/tmp/proofs-$name" --results "$LOGS/$name.results" --device "$DEVICE" \
		${budget:+--mem-budget "$budget"} --mem-status 5s ${PROVE_FLAGS:-}
	local proofs
	proofs=$(find "/tmp/proofs-$name" -name '*.proof' | sort)
	if "$BIN/zkpipe" verify --circuit "$dir" $proofs >"$LOGS/verify-$name.log" 2>&1; then
		echo "$name: $(echo "$proofs" | wc -l) proofs verified by gnark" | tee -a "$LOGS/summary.txt"
	else
		echo "$name: VERIFY FAILED: $(grep -c REJECTED "$LOGS/verify-$name.log") rejected" | tee -a "$LOGS/summary.txt"
	fi
	python3 - "$LOGS/$name.results" <<'PY' | tee -a "$LOGS/summary.txt"
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ends = []
for l in lines:
    parts = l.get("partitions") or []
    end = max((s["ended_at_ms"] for p in parts for s in p.get("stages", [])), default=0)
    ends.append(end)
    stage, cpu = {}, {}
    for p in parts:
        for s in p.get("stages", []):
            stage.setdefault(s["stage"], []).append(s["run_ms"])
            cpu.setdefault(s["stage"], []).append(s.get("cpu_ms", 0))
    faults = [p.get("minor_faults", 0) for p in parts]
    print("  %s: %s, %.1f s from its first partition's arrival to its line, ends at %.1f s; peak rss %.1f GiB, device %.1f GiB a partition; faults %s" % (
        l["id"], "ERROR " + l["error"] if l.get("error") else "ok", l.get("total_ms", 0) / 1e3, end / 1e3,
        l.get("rss_peak_bytes", 0) / 2**30, l.get("device_reserved_bytes", 0) / 2**30, faults))
    print("    run s a partition (median): " + ", ".join("%s %.2f" % (k, statistics.median(v) / 1e3) for k, v in stage.items()))
    print("    cpu s a partition (median, shared with overlapping runs): " + ", ".join("%s %.1f" % (k, statistics.median(v) / 1e3) for k, v in cpu.items()))
if len(ends) > 1:
    print("  steady: %.1f s a request (last %d requests' ends)" % ((ends[-1] - ends[0]) / 1e3 / (len(ends) - 1), len(ends)))
PY
	grep -m3 -iE 'load|resident' "$LOGS/$name.log" | cut -c1-240
}

step_memory() {
	local dir=$1 n=$2
	shift 2
	local b
	for b in "$@"; do step_request "$dir" "$n" "$b"; done
}

step_bench() {
	local circ=$1 curve=$2 lg=$3 n=$4
	measure "bench-$circ-$curve-$lg" "$BIN/zkpipe" bench --builtin "$circ" --curve "$curve" \
		--constraints $((1 << lg)) -n "$n" --skip-gnark --device "$DEVICE" --bg2-device "$DEVICE"
	tail -15 "$LOGS/bench-$circ-$curve-$lg.log"
}

step_solve() {
	local lg=$1 # sizes, comma-separated: 24,27 (up to 2^25 also four solves at once)
	GOMAXPROCS=$(nproc) measure "solve-$lg" "$BIN/solve.test" -test.run '^$' -test.bench "SolvePorep" \
		-test.benchtime 2x -test.timeout 1h -porep-logn "$lg"
	grep -E 'SolvePorep' "$LOGS/solve-$lg.log" | tee -a "$LOGS/summary.txt"
}

step_summary() { cat "$LOGS/summary.txt"; }

step_pack() {
	[ -n "${OUT:-}" ] || return 0
	tar czf "$OUT/seed27-logs.tgz" -C "$LOGS" --exclude='*.jsonl' .
	# xz'd, the library comes back (files from $OUT are at most 16 MiB) and a
	# later session carries it in $BIN instead of building (unpack)
	[ -f "$BIN/libzkpipe_cuda.so" ] && python3 -c '
import lzma, shutil, sys
with open(sys.argv[1], "rb") as i, lzma.open(sys.argv[2], "wb", preset=6) as o:
    shutil.copyfileobj(i, o)' "$BIN/libzkpipe_cuda.so" "$OUT/libzkpipe_cuda.so.xz"
	ls -la "$OUT"
}

while [ $# -gt 0 ]; do
	args=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		args+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	"step_${args[0]}" "${args[@]:1}"
done
