# Call 1 of 2026-12-06e: BLS12-381's Fp products by Karatsuba over 6-limb
# halves. The library built whole with -DZK_MONT_SOS=1 (mont32 and dot32 as
# mul_wide + redc_wide: G1's and G2's Fp products; -DZK_BLS_FP2_WIDE=1 is
# out: nvcc 11.8 spills 1,576 bytes in G2's level0 with it), its part
# objects returned; the BLS12-381 tests on the GPU; then A B A B against
# lib-base (call 6 of 12-06d's library: main's kernels). Carry
# [".carry-n1", ".carry-e1"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-e1 F=/tmp/e1
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-base.so.gz > $F/lib-base.so
(cd gpu/cuda && OBJ=$F/obj LIB=$F/lib-all.so ./build.sh -DZK_MONT_SOS=1 > $F/build.log 2>&1); echo "built rc=$? at $(el) s"
grep -E "^part|built|error|bytes spill|k_level0" $F/build.log | grep -E "^part|built|error|Bls12381" | cut -c1-200 | head -40
[ -f $F/lib-all.so ] || { pack; exit 1; }
tar czf $OUT/obj.tgz -C $F/obj --exclude '*.log' --exclude times .
pack
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-all.so timeout 120 $C/gpu.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -20; pack
meas() { # tag lib sizes
	[ $(el) -lt 540 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$3 timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	meas base-$r $F/lib-base.so 20,22
	meas all-$r $F/lib-all.so 20,22
done
pack; echo "total $(el) s"
