# Call 2 of 2026-12-06c: BLS12-381's NTT with lazy butterflies (ZK_BLS_NTT_LAZY,
# products by canonical twiddles: field.cuh mul_lazy_by) against call 1's
# library (eager), in one call. Carry [".carry-n1", ".carry-c2"]: .carry-n1 as
# c1.sh builds it; .carry-c2 holds call 1's obj.tgz and its library as
# lib-c1.so.gz. Only part 1 (the NTTs) is compiled; it links with call 1's
# other parts. About 300 s:
# - NTT 2^24 of both curves, before and after, alternating (A B A B);
# - the CUDA tests of BLS12-381 (CUDA against the CPU, tables, proofs
#   verified by gnark) and BN254's proofs on the real GPU with the new library;
# - both curves' streams (every proof verified by gnark);
# - ncu's sections of the lazy NTT kernel.
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c2 F=/tmp/c2
mkdir -p $F/obj
pack() { tar czf $OUT/logs.tgz -C $F --exclude obj . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
tar xzf $K/obj.tgz -C $F/obj
gunzip -c $K/lib-c1.so.gz > $F/lib-A.so
(cd gpu/cuda && OBJ=$F/obj PARTS="1" ./build.sh -Xptxas -v > $F/build.log 2>&1); echo "built at $(el) s"; grep -E "^part |built" $F/build.log; pack
B=$PWD/gpu/cuda/libzkpipe_cuda.so
[ -f $B ] || { echo "no library"; exit 1; }
cp $B $F/lib-B.so
gzip -c $B > $OUT/lib.so.gz
ntt() { # tag lib
	echo "## $1 from $(el) s"
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=16 timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ntt-bls-$1.log 2>&1
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MEASURE=ntt ZKPIPE_CUDA_NTT_SIZES=20,22,24 timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasure$' -test.benchtime 1x) > $F/ntt-bn-$1.log 2>&1
	grep -hE "NTT|FAIL|panic" $F/ntt-bls-$1.log $F/ntt-bn-$1.log; pack
}
ntt A1 $F/lib-A.so
ntt B1 $F/lib-B.so
ntt A2 $F/lib-A.so
ntt B2 $F/lib-B.so
echo "## tests from $(el) s"
(cd gpu && ZKPIPE_CUDA_LIB=$B timeout 200 $C/gpu.test -test.run 'CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDAProofsVerifyBLS12381|CUDAProofsVerify$|CUDAMatchesCPU$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$?"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -30; pack
stream() { # tag curve-flags…
	[ $(el) -lt 480 ] || return
	local tag=$1; shift
	ZKPIPE_CUDA_LIB=$B timeout 30 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda "$@" > $F/stream-$tag.log 2>&1
	echo "$tag: $(grep -E "zkpipe stream|error" $F/stream-$tag.log | tail -1)"
}
stream bls-1 --curve bls12-381 -n 96
stream bn-1 -n 160
stream bls-2 --curve bls12-381 -n 96
if [ $(el) -lt 460 ]; then
	echo "## ncu from $(el) s"
	(cd gpu && ZKPIPE_CUDA_LIB=$B ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=16 timeout 100 \
		ncu --clock-control none --kernel-name-base demangled -k "regex:k_ntt_regs<Field<Bls12381Fr" --launch-skip 70 --launch-count 1 \
		--section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section SchedulerStats \
		--section WarpStateStats --section LaunchStats --section InstructionStats \
		$C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ncu-ntt.log 2>&1
	grep -E "k_ntt_regs|Duration|SM Busy|Issue Slots|Registers|Warp Cycles Per Issued|Executed Instructions  |highest-utilized" $F/ncu-ntt.log | head; pack
fi
pack; echo "total $(el) s"
