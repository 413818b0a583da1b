# Call 1 of 2026-12-06c. Build here first:
#   mkdir -p .carry-n1 && CGO_ENABLED=0 go build -ldflags "-s -w" -o .carry-n1/zkpipe . &&
#   CGO_ENABLED=0 go test -c -o .carry-n1/gpu.test ./gpu && gzip -f .carry-n1/zkpipe .carry-n1/gpu.test
# run with carry [".carry-n1"]. About 450 s:
# - the library from main (parts 8 and 9 split from part 6: the parts' times);
#   its objects come back as obj.tgz, so that a later call relinks after
#   compiling only the parts it changes;
# - both curves' kernels with the defaults of a881da8 (BLS12-381 G2: early-Z,
#   chunk 64), and the chunk knob where it may still pay;
# - ncu's sections of BLS12-381's G1 and G2 level0 (what bounds them: the
#   IMAD pipe, issue, or latency at their occupancy) and of its NTT;
# - the streams of both curves.
set -u
export OUT
C=$PWD/.carry-n1 F=/tmp/n1
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude obj . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
(cd gpu/cuda && OBJ=$F/obj ./build.sh -Xptxas -v > $F/build.log 2>&1); echo "built at $(el) s"; grep -E "^part " $F/build.log; pack
B=$PWD/gpu/cuda/libzkpipe_cuda.so
[ -f $B ] || { echo "no library"; exit 1; }
gzip -c $B > $OUT/lib.so.gz
tar czf $OUT/obj.tgz -C $F/obj $(cd $F/obj && ls part*.o); ls -la $OUT
meas() { # tag bench sizes [env…]
	[ $(el) -lt 520 ] || return
	local tag=$1 bench=$2 sizes=$3; shift 3
	echo "## $tag from $(el) s"
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$B ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 90 $C/gpu.test -test.run '^$' -test.bench "$bench" -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	grep -E "MSM|NTT|FAIL|panic" $F/measure-$tag.log | sed -E 's/, gnark cpu.*//'; pack
}
prof() { # tag kernel-regex
	[ $(el) -lt 500 ] || return
	echo "## ncu $1 from $(el) s"
	(cd gpu && ZKPIPE_CUDA_LIB=$B ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=22 timeout 120 \
		ncu --clock-control none --kernel-name-base demangled -k "regex:$2" --launch-skip 1 --launch-count 1 \
		--section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section SchedulerStats \
		--section WarpStateStats --section LaunchStats --section InstructionStats \
		$C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ncu-$1.log 2>&1
	grep -vE "^==PROF==|^\s*$|^    -{5}" $F/ncu-$1.log | grep -vE "^\s+(OPT|INF|WRN) |BLS12-381|^(goos|goarch|pkg|cpu|PASS|ok)" | head -90; pack
}
stream() { # tag curve-flags…
	[ $(el) -lt 560 ] || return
	local tag=$1; shift
	ZKPIPE_CUDA_LIB=$B timeout 30 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda "$@" > $F/stream-$tag.log 2>&1
	echo "$tag: $(grep -E "zkpipe stream|error" $F/stream-$tag.log | tail -1)"
}
meas bls 'CUDAMeasureBLS12381$' 20,22,24
meas bn 'CUDAMeasure$' 20,22,24
prof g1 'level0<Field<Bls12381Fp'
prof g2 'level0<Fp2T<Field<Bls12381Fp'
prof ntt 'k_ntt_regs<Field<Bls12381Fr'
stream bls-1 --curve bls12-381 -n 96
stream bn-1 -n 160
meas bls-chunk128 'CUDAMeasureBLS12381$' 20 ZKPIPE_MSM_CHUNK=128
pack; echo "total $(el) s"
