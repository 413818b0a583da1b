# Device call for ZK_LEVEL0_ASYNC (not yet run): BLS12-381's G1 level0
# with the next point copied into shared memory by cp.async
# (-DZK_LEVEL0_ASYNC=1, msm.cuh) against the default. Build whole, objects
# kept; part 5 (BLS12-381's G1 MSM kernels) again with the flag; the
# BLS12-381 tests on the variant; then A B A B at G1 2^20, 2^22, 2^24.
# nvcc 11.8 (dev box): k_level0 164 registers, no spills, 24,576 bytes of
# shared memory a block, 12 LDGSTS.E.BYPASS.128. Carry [".carry-n1"]
# (gpu.test of the gpu package as on main).
set -u
export OUT
C=$PWD/.carry-n1 F=/tmp/la
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
(cd gpu/cuda && OBJ=$F/obj LIB=$F/lib-base.so ./build.sh > $F/build.log 2>&1); echo "built rc=$? at $(el) s"
grep -E "^part|built|error" $F/build.log | head -12
tar czf $OUT/obj.tgz -C $F/obj --exclude '*.log' --exclude times .
(cd gpu/cuda && OBJ=$F/obj PARTS="5" LIB=$F/lib-async.so ./build.sh -DZK_LEVEL0_ASYNC=1 > $F/build-async.log 2>&1); echo "async built rc=$? at $(el) s"
grep -E "k_level0I5FieldI16Bls12381Fp|error" $F/build-async.log | cut -c1-200 | head -4
[ -f $F/lib-async.so ] || { pack; exit 1; }
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-async.so timeout 120 $C/gpu.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head; pack
meas() { # tag lib
	[ $(el) -lt 540 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do meas base-$r $F/lib-base.so; meas async-$r $F/lib-async.so; done
pack; echo "total $(el) s"
