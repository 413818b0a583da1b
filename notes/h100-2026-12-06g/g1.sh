# Device call 1 of 2026-12-06g: 12-06f's f4.sh (the library as built: BLS12-381's G1 with
# 22-bit table windows from 2^24 and level0's widened tiles; ABI 12), with part 5's
# -DZK_BITSUM_PER=2048 variant compiled beside the whole build instead of after it, and
# ZKPIPE_CUDA_SPIN=1 (host threads spin while they wait) over the new library: how much of
# the wall clock over the kernels is the blocking sync's wake-up.
# Carry [".carry-n1", ".carry-f4"]: base = 12-06f call 1's objects (main before 2d1cc94)
# with .carry-n1's ABI 11 gpu.test; new = this tree with .carry-f4's ABI 12 gpu.test.
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-f4 F=$PWD/.cache/g1 # kept for a warm follow-up call
mkdir -p $F/obj $F/objn $F/objb
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude '*.test' --exclude 'hb??' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $F/base.test; gunzip -c $K/gpu.test.gz > $F/new.test; chmod +x $F/*.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
tar xzf $K/obj.tgz -C $F/obj
(cd gpu/cuda && OBJ=$F/obj PARTS="" LIB=$F/lib-base.so ./build.sh > $F/link.log 2>&1); echo "base linked rc=$? at $(el) s"
(cd gpu/cuda && OBJ=$F/objb PARTS="5" LINK=0 ./build.sh -DZK_BITSUM_PER=2048 > $F/build-bitsum.log 2>&1) &
(cd gpu/cuda && OBJ=$F/objn LIB=$F/lib-new.so ./build.sh > $F/build.log 2>&1); echo "new built rc=$? at $(el) s"
wait; for p in 1 2 3 4 6 7 8 9; do cp $F/objn/part$p.o $F/objb/; done
(cd gpu/cuda && OBJ=$F/objb PARTS="" LIB=$F/lib-bitsum.so ./build.sh >> $F/build-bitsum.log 2>&1); echo "bitsum linked rc=$? at $(el) s"
grep -E "^part|error" $F/build.log | head; pack
[ -f $F/lib-new.so ] || exit 1
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 150 $F/new.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDATablesMatchCPU$|CUDAProofsVerify$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -12
(cd gpu && ZKPIPE_MSM_WINDOW=22 ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 60 $F/new.test -test.run 'CUDATablesMatchCPUBLS12381' -test.v) > $F/tests-w22.log 2>&1
echo "tests w22 rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL)" $F/tests-w22.log | head -3; pack
if [ -f $F/lib-bitsum.so ]; then
	(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-bitsum.so timeout 100 $F/new.test -test.run 'CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDAProofsVerifyBLS12381' -test.v) > $F/tests-bitsum.log 2>&1
	echo "tests bitsum rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL)" $F/tests-bitsum.log | head -4
fi
for d in 32 64; do g++ -O3 -DZK_FIELD_MUL=$d -std=c++17 -I gpu/cuda notes/h100-2026-12-06g/hornerbench.cpp -o $F/hb$d && echo "host horner, mul$d: $($F/hb$d)"; done
lscpu | grep -E "Model name|MHz" | head -3
meas() { # tag test lib [env]
	[ $(el) -lt 560 ] || return
	(cd gpu && env ${4:-X=1} ZKPIPE_CUDA_LIB=$3 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 60 $2 -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
round() {
	meas base-$1 $F/base.test $F/lib-base.so
	meas new-$1 $F/new.test $F/lib-new.so
	[ -f $F/lib-bitsum.so ] && meas bitsum-$1 $F/new.test $F/lib-bitsum.so
	meas spin-$1 $F/new.test $F/lib-new.so ZKPIPE_CUDA_SPIN=1
}
round 1
# ncu's kernel durations at 2^20 (not profiled before) over the new library
if [ $(el) -lt 480 ]; then
	(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20 timeout 100 ncu --clock-control none \
		-k 'regex:k_(digits|runs|tiles|level|segment|bitsum|reduce|weigh|chunks|ones)|Radix|Scan|Reduce' --metrics gpu__time_duration.sum --print-summary per-kernel \
		$F/new.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ncu-20.log 2>&1
	echo "ncu 20 rc=$? at $(el) s"; pack
fi
round 2
pack; echo "total $(el) s"
