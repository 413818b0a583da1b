#!/usr/bin/env bash
# One device-machine session's measurements, in steps (run from the
# repository root on the H200 machine; Go binaries built here beforehand):
#   CGO_ENABLED=0 go build -o .carry-lead/zkpipe .
#   CGO_ENABLED=0 go test -c -o .carry-lead/gpu.test ./gpu
# Steps:
#   build            nvcc → gpu/cuda/libzkpipe_cuda.so (copied to $OUT)
#   prebuilt         use .carry-lead/libzkpipe_cuda.so from an earlier build
#   test             the gpu package's CUDA tests against the library
#   measure SIZES    kernel timings, G1 MSMs at the log2 sizes (20,22,24,27)
#   setup C:N…       zkpipe setup of built-in circuit C at N constraints
#   stream C:N P     zkpipe bench of P proofs: default flags (auto shape),
#                    then the hand-tuned shape, then P/8 proofs one at a time
#                    for each stage's CPU ms; gnark on 4 proofs
#   streams C:N P    zkpipe bench of P proofs (default flags) with 1, 2 and
#                    3 compute streams, then 2 with the tail split off
#                    (ZKPIPE_CUDA_TAIL_SPLIT=0), 2 with spinning waits
#                    (ZKPIPE_CUDA_SPIN=1) and 2 with the pool's cross-stream
#                    reuse off (ZKPIPE_CUDA_POOL_DEPS=0): proofs/s and stage times of each,
#                    and each stage's CPU ms over 4 proofs one at a time
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
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
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
	prebuilt) export ZKPIPE_CUDA_LIB=$PWD/$bin/libzkpipe_cuda.so ;;
	test)
		$bin/gpu.test -test.run 'CUDA|FindCUDA|Multi' -test.v -test.timeout 400s >"$OUT/test.log" 2>&1
		echo "gpu tests rc=$?"
		grep -E "^\s*--- (FAIL|SKIP)|^--- PASS: Test|panic" "$OUT/test.log" | head -40
		grep -cE "^\s*--- PASS" "$OUT/test.log" | sed 's/^/passed: /'
		;;
	measure)
		ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$1 $bin/gpu.test -test.run 'CUDAMeasure' -test.v -test.timeout 400s 2>&1 |
			grep -vE "^=== RUN" | tee "$OUT/measure.log"
		shift
		;;
	setup)
		for spec in ${1//,/ }; do
			c=${spec%%:*} n=${spec##*:}
			[ -f /tmp/zkc/$c-$n/circuit.json ] || $bin/zkpipe setup --circuit $c -n $n --out /tmp/zkc/$c-$n | tail -1
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
			tee "$OUT/stream-$c-$n-tuned.log" | grep -E "proofs/s|^(stage|synth|transfer|msm-h|tail|b-g2)"
		echo "== $c $n: gnark, 4 proofs"
		$bin/zkpipe bench --circuit $d -n 4 --device cuda --bg2-device cuda --mem-status 0 2>&1 | grep -E "gnark|ratio"
		;;
	streams)
		spec=$1 p=$2
		shift 2
		c=${spec%%:*} n=${spec##*:} d=/tmp/zkc/${spec%%:*}-${spec##*:}
		for run in "1" "2" "3" "2 ZKPIPE_CUDA_TAIL_SPLIT=0" "2 ZKPIPE_CUDA_SPIN=1" "2 ZKPIPE_CUDA_POOL_DEPS=0"; do
			k=${run%% *} envs=()
			[ "$run" != "$k" ] && envs=(${run#* })
			tag=$(echo "$run" | tr ' =' '-_')
			echo "== $c $n: --cuda-compute-streams $k ${envs[*]}"
			env "${envs[@]}" $bin/zkpipe bench --circuit $d -n $p --skip-gnark --device cuda --bg2-device cuda --mem-status 0 \
				--cuda-compute-streams $k --serial-cpu 4 2>&1 | tee "$OUT/streams-$c-$n-$tag.log" |
				grep -E "proofs/s|one proof|^(stage|synth|transfer|msm-h|batch|tail|b-g2)"
		done
		;;
	devmem)
		spec=$1 p=$2
		shift 2
		d=/tmp/zkc/${spec%%:*}-${spec##*:}
		for i in $(seq 1 $p); do echo "{\"id\":\"d$i\",\"generate\":{\"seed\":$i}}"; done >/tmp/devmem.jsonl
		# keys of a 2^20 circuit take ~0.7 GiB on the device, a job ~0.5 GiB
		$bin/zkpipe prove --circuit $d --jobs /tmp/devmem.jsonl --out /tmp/devmem --results "$OUT/devmem.jsonl" \
			--device cuda --bg2-device cuda --device-budget ${DEVBUDGET:-1500MiB} --mem-status 1s 2>&1 | tail -4
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
