#!/usr/bin/env bash
# One device-machine session's measurements, in steps (run from the
# repository root on the H200 machine; Go binaries built here beforehand):
#   CGO_ENABLED=0 go build -o .carry-lead/zkpipe .
#   CGO_ENABLED=0 go test -c -o .carry-lead/gpu.test ./gpu
# Steps:
#   build            nvcc → gpu/cuda/libzkpipe_cuda.so (copied to $OUT)
#   bgbuild          the same in the background; waitbuild waits for it and
#                    selects it (steps that need no new library run meanwhile)
#   prebuilt         use .carry-lead/libzkpipe_cuda.so from an earlier build
#   faults C:N P     bench/mem-note.sh: minor faults per proof, first against
#                    the median of the rest, unbounded and under a budget for
#                    three jobs, P generate jobs of mulchain N; $FAULTS_FLAGS
#                    are extra prove flags (--device cpu: the CPU backend's
#                    faults, notes/cpu-faults.md), $FAULTS_TAG a suffix of
#                    its log folder
#   fieldbench       nvcc gpu/cuda/fieldbench.cu (FIELDBENCH_MODES="32 64" for both field
#                    products for the curve rows) and run both: products/s
#                    against the chip's model, and the device-side check
#   build64          nvcc a second library with the first, 64-bit product
#                    (-DZK_FIELD_MUL=64) into gpu/cuda/libzkpipe_cuda64.so,
#                    in the background: `lib64` waits for it and selects it
#   lib64, lib32     select that library, or the default one, for later steps
#   tables on|off    MSM tables (--cuda-msm-tables) for later steps: the
#                    default, or off (gpu tests and zkpipe alike)
#   test             the gpu package's CUDA tests against the library
#   measure SIZES    kernel timings, G1 MSMs at the log2 sizes (20,22,24,27),
#                    BN254's then BLS12-381's (BenchmarkCUDAMeasureBLS12381:
#                    its G1 at SIZES too, G2 2^20, NTT 2^20 and 2^24)
#   before SIZES     kernel timings (as measure) of another build: the
#                    gpu.test and library carried as $bin/gpu-before.test(.gz)
#                    and $bin/lib-before.so, e.g. main's before a change, for
#                    before/after in one call (may run beside a build)
#   envgrid          G1 MSMs at $MSMGRID_SIZES (default 20,22,24) and G2 2^20,
#                    NTT 2^24, once per set of variables in $ENV_GRID ('|'
#                    between sets, e.g. "ZKPIPE_MSM_CHUNK=16|ZKPIPE_MSM_CHUNK=32";
#                    gpu.test reads the CUDAConfig knobs of commands/cudaenv.go)
#   keyload C:N      a setup's proving key raw and compressed: zkpipe's load
#                    against gnark's ReadFrom/UnsafeReadFrom (gnarksrc.test
#                    BenchmarkKeyLoad, carried as $bin/gnarksrc.test.gz)
#   pack             every log under $OUT into $OUT/logs.tgz (the call brings
#                    back 8 files at most)
#   msmgrid          G1 (2^20, 2^22, 2^24, or $MSMGRID_SIZES) and G2 (2^20) MSM
#                    timings for each window:chunk:segment in $MSM_GRID (0 =
#                    the default), through ZKPIPE_MSM_WINDOW/_CHUNK/_SEGMENT,
#                    which gpu.test turns into its backend's gpu.CUDAConfig
#   nttgrid          NTT (2^16…2^24, forward) and NTT+MSM_H (2^16…2^22) timings
#                    of each library in $NTT_LIBS (default: the selected one),
#                    e.g. builds with other -DZK_NTT_STAGES/-DZK_NTT_LGBLOCK
#                    (driver.cuh; the run-time NTT variants left in ABI 9:
#                    notes/cuda-variants.md)
#   profile          ncu's per-kernel times of BenchmarkCUDAMeasure's MSMs at
#                    $PROFILE_SIZES (log2, default 22; PROFILE_MEASURE=all
#                    for every kernel) (--clock-control none), where ncu can
#                    read the GPU
#   ncu K SKIP N     ncu's sections (throughputs, occupancy, warp stalls) of N
#                    launches of kernel K after SKIP, in BenchmarkCUDAMeasure under
#                    PROFILE_MEASURE, PROFILE_SIZES, PROFILE_NTT_SIZES
#   bgsetup C:N…     the same in the background (beside a build), waitsetup
#                    waits for it
#   setup C:N…       zkpipe setup of built-in circuit C at N constraints
#                    (C@bls12-381:N: over BLS12-381; the other steps take
#                    the same spec)
#   stream C:N P     zkpipe bench of P proofs: default flags (auto shape),
#                    then the hand-tuned shape, then P/8 proofs one at a time
#                    for each stage's CPU ms; gnark on 4 proofs
#   streams C:N P    zkpipe bench of P proofs (default flags) with 1, 2 and
#                    3 compute streams, then 2 with the tail split off
#                    (ZKPIPE_CUDA_TAIL_SPLIT=0) and 2 with spinning waits
#                    (ZKPIPE_CUDA_SPIN=1): proofs/s and stage times of each,
#                    and each stage's CPU ms over 4 proofs one at a time
#   quick C:N P      zkpipe bench of P proofs, default flags, no gnark: the
#                    proofs/s line and the per-stage table only ($QUICK_BIN: another
#                    zkpipe in $bin, e.g. zkpipe-before, with $QUICK_LIB its library)
#   tailbatch C:N P  cross-proof batching of the tail MSMs: one batched tail
#                    of k = 1, 2, 4, 8 jobs against k tails one by one
#                    (gpu.test BenchmarkCUDATailBatch at the log2 sizes in
#                    $TAILBATCH_SIZES, default 16,20), then the quick bench of
#                    P proofs with --tail-msm-batch 1, 2 and 4 (one run each)
#   shapes C:N P     zkpipe bench of P proofs four ways: default flags
#                    (shape adapting), default with --adapt-shape=false
#                    (the shape chosen at start), hand-tuned adapting,
#                    hand-tuned fixed; proofs/s and the shapes each ended with
#   cpu C:N P        zkpipe bench of P proofs on the CPU backend alone, default
#                    flags, against gnark in the same run (proofs/s and CPU ms
#                    a proof of each), then each stage's CPU ms over 2 proofs
#                    one at a time; then the same P proofs once per variant in
#                    $CPU_VARIANTS ('|'-separated flag sets; default:
#                    --share-cores, and 8 tasks a CPU MSM/NTT), without gnark;
#                    with $CPU_BEFORE (another zkpipe binary, e.g. main's),
#                    first that binary on the same proofs, default flags
#   cpuheavy         the CPU backend's tail and G2 MSMs of 1 and 6 jobs at
#                    once under each bound on its heavy operations
#                    (--cpu-heavy-ops) and MSM task count: gpu.test
#                    BenchmarkCPUHeavyOps at 2^$CPUHEAVY_LG (default 20), both
#                    curves; CPU ms and wall ms a job (about 5 minutes at 2^20)
#   devmem C:N P     a stream under a device budget of the keys and ~1.5
#                    jobs, to show jobs waiting for GPU memory
#   fleet C:N P      P generate jobs through `zkpipe prove`, then through
#                    `zkpipe serve` (embedded NATS and a worker): submit,
#                    results --follow; proofs/s of each, timed after the
#                    keys are resident (prove: from its result lines'
#                    stream clock; serve: after a first warm-up job)
# Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/zkout}
mkdir -p "$OUT" /tmp/zkc
bin=.carry-lead
for f in zkpipe gpu.test gpu-before.test zkpipe-before gnarksrc.test; do # carried gzipped (the call's 64 MiB)
	[ -f $bin/$f.gz ] && [ ! -f $bin/$f ] && gunzip -c $bin/$f.gz >$bin/$f && chmod +x $bin/$f
done
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
# measure BIN REGEX ARGS…: the gpu package's measuring benchmarks matching
# REGEX (BenchmarkCUDAMeasure, …MeasureStreams, …TailBatch), once each;
# they repeat and take medians themselves. A gpu.test built before they
# were benchmarks (as $bin/gpu-before.test may be) runs them as the tests
# they were then (TestCUDAMeasure…, under ZKPIPE_CUDA_BENCH=1).
measure() {
	local test=$1 re=$2
	shift 2
	ZKPIPE_CUDA_BENCH=1 "$test" -test.run "$re" -test.bench "$re" -test.benchtime 1x "$@"
}
tuned=(--parse-workers 2 --synthesize-workers 6 --transfer-workers 3 --assemble-workers 2)
while [ $# -gt 0 ]; do
	step=$1
	shift
	t0=$(date +%s)
	case $step in
	build)
		nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
		gpu/cuda/build.sh >"$OUT/build.log" 2>&1 || { grep -v "^ptxas info" "$OUT/build.log" | tail -30; exit 1; }
		cp gpu/cuda/libzkpipe_cuda.so "$OUT/"
		;;
	bgbuild)
		rm -f /tmp/build.rc
		(gpu/cuda/build.sh >"$OUT/build.log" 2>&1; echo $? >/tmp/build.rc; cp gpu/cuda/libzkpipe_cuda.so "$OUT/") &
		;;
	waitbuild)
		while [ ! -f /tmp/build.rc ]; do sleep 1; done
		[ "$(cat /tmp/build.rc)" = 0 ] || { grep -v "^ptxas info" "$OUT/build.log" | tail -30; exit 1; }
		export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
		echo "library: built in this call"
		;;
	prebuilt) export ZKPIPE_CUDA_LIB=$PWD/$bin/libzkpipe_cuda.so ;;
	faults)
		# steady-state minor faults per proof, unbounded and under a budget
		# for three jobs (bench/mem-note.sh), mulchain only
		spec=$1 p=$2
		shift 2
		# shellcheck disable=SC2086 # $FAULTS_FLAGS is a set of prove flags (--device cpu)
		bash bench/mem-note.sh "$PWD/$bin/zkpipe" "$OUT/faults-${spec##*:}${FAULTS_TAG:-}" "$p" "${spec##*:}" all -- ${FAULTS_FLAGS:-} 2>&1 |
			grep -vE "^zkpipe: (shape|status)" | tail -30
		;;
	fieldbench)
		for m in ${FIELDBENCH_MODES:-32}; do
			nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -DZK_FIELD_MUL=$m \
				gpu/cuda/fieldbench.cu -o /tmp/fieldbench$m >"$OUT/fieldbench-build$m.log" 2>&1 ||
				{ tail -20 "$OUT/fieldbench-build$m.log"; continue; }
			/tmp/fieldbench$m | tee "$OUT/fieldbench$m.log"
		done
		;;
	build64)
		(LIB=libzkpipe_cuda64.so gpu/cuda/build.sh -DZK_FIELD_MUL=64 >"$OUT/build64.log" 2>&1; echo $? >/tmp/build64.rc) &
		;;
	lib64)
		while [ ! -f /tmp/build64.rc ]; do sleep 1; done
		[ "$(cat /tmp/build64.rc)" = 0 ] || { tail -20 "$OUT/build64.log"; exit 1; }
		export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda64.so
		echo "library: 64-bit field products"
		;;
	tables)
		if [ "$1" = off ]; then
			export ZKPIPE_CUDA_MSM_TABLES_MIB=0 ZKPIPE_CUDA_MSM_TABLES=off
		else
			unset ZKPIPE_CUDA_MSM_TABLES_MIB ZKPIPE_CUDA_MSM_TABLES
		fi
		echo "msm tables: $1"
		shift
		;;
	lib32)
		export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
		echo "library: 32-bit field products"
		;;
	test)
		$bin/gpu.test -test.run 'CUDA|FindCUDA|Multi' -test.v -test.timeout 400s >"$OUT/test.log" 2>&1
		echo "gpu tests rc=$?"
		grep -E "^\s*--- (FAIL|SKIP)|^--- PASS: Test|panic" "$OUT/test.log" | head -40
		grep -cE "^\s*--- PASS" "$OUT/test.log" | sed 's/^/passed: /'
		;;
	measure)
		ZKPIPE_CUDA_MSM_SIZES=$1 measure $bin/gpu.test 'CUDAMeasure' -test.v -test.timeout 400s 2>&1 |
			grep -vE "^=== RUN" | tee "$OUT/measure-$(basename "$ZKPIPE_CUDA_LIB" .so).log"
		shift
		;;
	before)
		ZKPIPE_CUDA_LIB=$PWD/$bin/lib-before.so ZKPIPE_CUDA_MSM_SIZES=$1 \
			measure $bin/gpu-before.test 'CUDAMeasure$' -test.v -test.timeout 400s 2>&1 |
			grep -vE "^=== RUN" | tee "$OUT/measure-before.log"
		shift
		;;
	envgrid)
		IFS='|' read -ra sets <<<"${ENV_GRID:-}"
		for e in "${sets[@]}"; do
			echo "== $e"
			# shellcheck disable=SC2086 # a set is several assignments
			(export $e ZKPIPE_CUDA_MEASURE=msm ZKPIPE_CUDA_MSM_SIZES=${MSMGRID_SIZES:-20,22,24}
				measure $bin/gpu.test 'CUDAMeasure$' -test.timeout 400s 2>&1) | grep -E "MSM 2|FAIL|panic" | sed 's/, gnark.*//'
		done | tee "$OUT/envgrid.log"
		;;
	keyload)
		# a setup's proving key raw and compressed: zkpipe's load against
		# gnark's ReadFrom and UnsafeReadFrom in one run (BenchmarkKeyLoad;
		# the compressed copy is written once beside the keys)
		d=/tmp/zkc/${1%%:*}-${1##*:}
		shift
		du -sh "$d"/circuit.pk
		ZKPIPE_BENCH_KEYS=$d $bin/gnarksrc.test -test.run - -test.bench KeyLoad -test.benchtime=1x -test.v 2>&1 |
			grep -vE "^=== RUN" | tee "$OUT/keyload.log"
		du -sh "$d.compressed"/circuit.pk
		;;
	pack)
		(cd "$OUT" && tar czf /tmp/logs.tgz --exclude='*.so' . && rm -f ./*.log ./*.txt && mv /tmp/logs.tgz .)
		;;
	msmgrid)
		for g in ${MSM_GRID:-0:0:0 16:0:0 17:0:0 19:0:0 20:0:0 22:0:0 24:0:0 22:0:32}; do
			IFS=: read -r w c sg <<<"$g"
			echo "== window ${w/#0/auto} chunk ${c/#0/32} segment ${sg/#0/8}"
			ZKPIPE_MSM_WINDOW=$w ZKPIPE_MSM_CHUNK=$c ZKPIPE_MSM_SEGMENT=$sg \
				ZKPIPE_CUDA_MEASURE=msm ZKPIPE_CUDA_MSM_SIZES=${MSMGRID_SIZES:-20,22,24} \
				measure $bin/gpu.test 'CUDAMeasure' -test.timeout 400s 2>&1 | grep -E "MSM 2" | sed 's/, gnark.*//'
		done | tee "$OUT/msmgrid.log"
		;;
	nttgrid)
		for lib in ${NTT_LIBS:-$ZKPIPE_CUDA_LIB}; do
			echo "== ntt of $(basename "$lib")"
			ZKPIPE_CUDA_LIB=$lib ZKPIPE_CUDA_MEASURE=ntt \
				measure $bin/gpu.test 'CUDAMeasure$' -test.v -test.timeout 300s 2>&1 | grep -E "device:|NTT"
		done | tee "$OUT/nttgrid.log"
		;;
	profile)
		ncu --version | tail -1
		ZKPIPE_CUDA_MEASURE=${PROFILE_MEASURE:-msm} ZKPIPE_CUDA_MSM_SIZES=${PROFILE_SIZES:-22} timeout 300 \
			ncu --clock-control none --metrics gpu__time_duration.sum \
			--print-summary per-kernel $bin/gpu.test -test.run '^$' -test.bench 'CUDAMeasure$' -test.benchtime 1x -test.timeout 300s >"$OUT/profile.log" 2>&1
		echo "ncu rc=$?"
		grep -E "^\s+k_|^  [a-zA-Z_].*\(|gpu__time_duration.sum|Invocations|DeviceRadix|Onesweep" "$OUT/profile.log" | head -80
		;;
	ncu)
		# ncu KERNEL SKIP COUNT: ncu's sections (speed of light, compute and
		# memory workload, occupancy, scheduler and warp states, launch) of
		# COUNT launches of KERNEL (a base name) after SKIP of them, in
		# BenchmarkCUDAMeasure under PROFILE_MEASURE (msm, the default, or ntt),
		# ZKPIPE_CUDA_MSM_SIZES=$PROFILE_SIZES (default 22) and
		# ZKPIPE_CUDA_NTT_SIZES=$PROFILE_NTT_SIZES
		kern=$1 skip=$2 count=$3
		shift 3
		ZKPIPE_CUDA_MEASURE=${PROFILE_MEASURE:-msm} ZKPIPE_CUDA_MSM_SIZES=${PROFILE_SIZES:-22} \
			ZKPIPE_CUDA_NTT_SIZES=${PROFILE_NTT_SIZES:-} timeout 300 \
			ncu --clock-control none -k "$kern" --launch-skip "$skip" --launch-count "$count" \
			--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
			--section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats \
			$bin/gpu.test -test.run '^$' -test.bench 'CUDAMeasure$' -test.benchtime 1x -test.timeout 300s >"$OUT/ncu-$kern-$skip.log" 2>&1
		echo "ncu rc=$?"
		grep -vE "^==PROF==|^\s*$|^    -{5}" "$OUT/ncu-$kern-$skip.log" | grep -vE "^\s+(OPT|INF|WRN) " | tail -150
		;;
	bgsetup)
		rm -f /tmp/bgsetup.rc # a warm machine keeps the last call's
		(bash "$0" setup "$1" >"$OUT/bgsetup.log" 2>&1; echo $? >/tmp/bgsetup.rc) &
		shift
		;;
	waitsetup)
		while [ ! -f /tmp/bgsetup.rc ]; do sleep 1; done
		cat "$OUT/bgsetup.log"
		;;
	setup)
		for spec in ${1//,/ }; do
			c=${spec%%:*} n=${spec##*:} curve=bn254
			[[ $c == *@* ]] && curve=${c#*@} # C@bls12-381:N: the built-in on that curve, in /tmp/zkc/C@bls12-381-N
			[ -f /tmp/zkc/$c-$n/circuit.json ] || $bin/zkpipe setup --builtin ${c%@*} --curve $curve --constraints $n --dir /tmp/zkc/$c-$n | tail -1
		done
		shift
		;;
	stream)
		spec=$1 p=$2
		shift 2
		c=${spec%%:*} n=${spec##*:} d=/tmp/zkc/${spec%%:*}-${spec##*:}
		echo "== $c $n: default flags"
		$bin/zkpipe bench --circuit $d -n $p --skip-gnark --device cuda --bg2-device cuda --mem-status 0 \
			--serial-cpu $((p / 8 > 2 ? p / 8 : 2)) 2>&1 | tee "$OUT/stream-$c-$n-default.log" | grep -vE "^bench:"
		echo "== $c $n: hand-tuned (${tuned[*]})"
		$bin/zkpipe bench --circuit $d -n $p --skip-gnark --device cuda --bg2-device cuda --mem-status 0 "${tuned[@]}" 2>&1 |
			tee "$OUT/stream-$c-$n-tuned.log" | grep -E "proofs/s|^(stage|synth|transfer|msm-h|tail|b-g2|shape)"
		echo "== $c $n: gnark, ${GNARK_PROOFS:-4} proofs"
		$bin/zkpipe bench --circuit $d -n ${GNARK_PROOFS:-4} --device cuda --bg2-device cuda --mem-status 0 2>&1 | grep -E "gnark|ratio"
		;;
	streams)
		spec=$1 p=$2
		shift 2
		c=${spec%%:*} n=${spec##*:} d=/tmp/zkc/${spec%%:*}-${spec##*:}
		for run in "1" "2" "3" "2 ZKPIPE_CUDA_TAIL_SPLIT=0" "2 ZKPIPE_CUDA_SPIN=1"; do
			k=${run%% *} envs=()
			[ "$run" != "$k" ] && envs=(${run#* })
			tag=$(echo "$run" | tr ' =' '-_')
			echo "== $c $n: --cuda-compute-streams $k ${envs[*]}"
			env "${envs[@]}" $bin/zkpipe bench --circuit $d -n $p --skip-gnark --device cuda --bg2-device cuda --mem-status 0 \
				--cuda-compute-streams $k --serial-cpu 4 2>&1 | tee "$OUT/streams-$c-$n-$tag.log" |
				grep -E "proofs/s|one proof|^(stage|synth|transfer|msm-h|batch|tail|b-g2)"
		done
		;;
	quick)
		spec=$1 p=$2
		shift 2
		c=${spec%%:*} n=${spec##*:} d=/tmp/zkc/${spec%%:*}-${spec##*:}
		echo "== $c $n: default flags, ${QUICK_BIN:-zkpipe} $(basename "${QUICK_LIB:-$ZKPIPE_CUDA_LIB}"), msm tables ${ZKPIPE_CUDA_MSM_TABLES:-auto} ${QUICK_FLAGS:-}"
		ZKPIPE_CUDA_LIB=${QUICK_LIB:-$ZKPIPE_CUDA_LIB} $bin/${QUICK_BIN:-zkpipe} bench --circuit $d -n $p --skip-gnark --device cuda --bg2-device cuda --mem-status 0 ${QUICK_FLAGS:-} 2>&1 |
			tee "$OUT/quick-$c-$n-$(basename "$ZKPIPE_CUDA_LIB" .so)-${ZKPIPE_CUDA_MSM_TABLES:-auto}${QUICK_TAG:-}.log" | grep -vE "^bench:"
		;;
	tailbatch)
		spec=$1 p=$2
		shift 2
		c=${spec%%:*} n=${spec##*:} d=/tmp/zkc/${spec%%:*}-${spec##*:}
		ZKPIPE_CUDA_TAILBATCH_SIZES=${TAILBATCH_SIZES:-16,20} measure $bin/gpu.test 'CUDATailBatch$' \
			-test.v -test.timeout 400s 2>&1 | grep -vE "^=== RUN" | tee "$OUT/tailbatch-measure-$(basename "$ZKPIPE_CUDA_LIB" .so).log"
		for k in 1 2 4; do
			echo "== $c $n: --tail-msm-batch $k, default flags, msm tables ${ZKPIPE_CUDA_MSM_TABLES:-auto}"
			$bin/zkpipe bench --circuit $d -n $p --skip-gnark --device cuda --bg2-device cuda --mem-status 0 --tail-msm-batch $k 2>&1 |
				tee "$OUT/tailbatch-$c-$n-k$k-${ZKPIPE_CUDA_MSM_TABLES:-auto}.log" | grep -vE "^bench:"
		done
		;;
	shapes)
		spec=$1 p=$2
		shift 2
		c=${spec%%:*} n=${spec##*:} d=/tmp/zkc/${spec%%:*}-${spec##*:}
		for how in default fixed tuned tuned-fixed; do
			case $how in
			default) extra=() ;;
			fixed) extra=(--adapt-shape=false) ;;
			tuned) extra=("${tuned[@]}") ;;
			tuned-fixed) extra=("${tuned[@]}" --adapt-shape=false) ;;
			esac
			echo "== $c $n: $how (${extra[*]})"
			$bin/zkpipe bench --circuit $d -n $p --skip-gnark --device cuda --bg2-device cuda --mem-status 0 "${extra[@]}" 2>&1 |
				tee "$OUT/shapes-$c-$n-$how.log" | grep -E "proofs/s|^shape|^zkpipe: shape"
		done
		;;
	cpu)
		spec=$1 p=$2
		shift 2
		c=${spec%%:*} n=${spec##*:} d=/tmp/zkc/${spec%%:*}-${spec##*:}
		echo "== $c $n: CPU backend, default flags"
		$bin/zkpipe bench --circuit $d -n $p --device cpu --mem-status 0 --serial-cpu 2 2>&1 | tee "$OUT/cpu-$c-$n.log" | grep -vE "^bench:"
		if [ -n "${CPU_BEFORE:-}" ]; then
			echo "== $c $n: CPU backend, default flags, $CPU_BEFORE"
			$CPU_BEFORE bench --circuit $d -n $p --device cpu --mem-status 0 --skip-gnark 2>&1 |
				tee "$OUT/cpu-$c-$n-before.log" | grep -E "proofs/s|^shape"
		fi
		IFS='|' read -ra variants <<<"${CPU_VARIANTS:---share-cores|--msm-tasks 8 --fft-tasks 8}"
		for v in "${variants[@]}"; do
			echo "== $c $n: CPU backend, $v"
			# shellcheck disable=SC2086 # a variant is a set of flags
			$bin/zkpipe bench --circuit $d -n $p --device cpu --mem-status 0 --skip-gnark $v 2>&1 |
				tee "$OUT/cpu-$c-$n-$(echo $v | tr -c 'a-z0-9\n' _).log" | grep -E "proofs/s|^shape"
		done
		;;
	cpuheavy)
		$bin/gpu.test -test.run '^$' -test.bench "CPUHeavyOps/.*/2\\^${CPUHEAVY_LG:-20}/" -test.benchtime 1x -test.timeout 590s 2>&1 |
			grep -E "^Benchmark|^ok|FAIL|panic" | tee "$OUT/cpuheavy.log"
		;;
	devmem)
		spec=$1 p=$2
		shift 2
		d=/tmp/zkc/${spec%%:*}-${spec##*:}
		for i in $(seq 1 $p); do echo "{\"id\":\"d$i\",\"generate\":{\"seed\":$i}}"; done >/tmp/devmem.jsonl
		# keys of a 2^20 mulchain take 480 MiB on the device, a job ~1 GiB with
		# two compute streams (two tail MSMs' scratch at once; 668 MiB with one)
		$bin/zkpipe prove --circuit $d --jobs /tmp/devmem.jsonl --out /tmp/devmem --results "$OUT/devmem.jsonl" \
			--device cuda --bg2-device cuda --device-budget ${DEVBUDGET:-2100MiB} --mem-status 1s 2>&1 | tail -4
		;;
	fleet)
		spec=$1 p=$2
		shift 2
		d=/tmp/zkc/${spec%%:*}-${spec##*:}
		gpu=(${FLEET_FLAGS:---device cuda --bg2-device cuda} --mem-status 0)
		for i in $(seq 1 $p); do echo "{\"id\":\"f$i\",\"generate\":{\"seed\":$i}}"; done >/tmp/fleet.jsonl
		$bin/zkpipe prove --circuit $d --jobs /tmp/fleet.jsonl --out /tmp/fleet-prove --results "$OUT/fleet-prove.jsonl" "${gpu[@]}" 2>/dev/null
		python3 -c "import json,sys; r=[json.loads(l) for l in open('$OUT/fleet-prove.jsonl')]; e=max(s['ended_at_ms'] for x in r for s in x['stages']); print('prove: %d proofs, %d failed, %.2f proofs/s' % (len(r), sum(1 for x in r if x.get('error')), len(r)/e*1000))"
		url=nats://127.0.0.1:24222
		$bin/zkpipe serve --nats-listen 127.0.0.1:24222 --store /tmp/fleet-store "${gpu[@]}" 2>"$OUT/serve.log" &
		srv=$!
		sleep 2
		$bin/zkpipe circuit push --nats $url $d
		echo '{"id":"warm","generate":{"seed":999}}' | $bin/zkpipe submit --nats $url -
		$bin/zkpipe results --nats $url --out /tmp/fleet-warm --results /tmp/warm.jsonl --follow &
		res=$!
		until [ -s /tmp/warm.jsonl ]; do sleep 0.05; done
		kill $res
		f0=$(date +%s.%N)
		$bin/zkpipe results --nats $url --out /tmp/fleet-out --results "$OUT/fleet-serve.jsonl" --follow 2>/dev/null &
		res=$!
		$bin/zkpipe submit --nats $url /tmp/fleet.jsonl
		until [ "$(wc -l <"$OUT/fleet-serve.jsonl" 2>/dev/null || echo 0)" -ge "$p" ]; do sleep 0.05; done
		f1=$(date +%s.%N)
		kill $res $srv
		wait $srv 2>/dev/null
		python3 -c "import json; r=[json.loads(l) for l in open('$OUT/fleet-serve.jsonl')]; print('serve: %d proofs, %d failed, %.2f proofs/s (submit to last result)' % (len(r), sum(1 for x in r if x.get('error')), len(r)/($f1-$f0)))"
		$bin/zkpipe verify --circuit $d /tmp/fleet-out/*.proof | grep -vc ": ok$" | sed 's/^/fleet proofs gnark rejects: /'
		;;
	*) echo "unknown step $step" ; exit 2 ;;
	esac
	echo "[$step: $(($(date +%s) - t0)) s]"
done
