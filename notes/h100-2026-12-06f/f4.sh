# Device call for the next session (not run in 2026-12-06f: its device
# time was spent): BLS12-381's G1 with 22-bit table windows from 2^24
# bases (per-group table layout, ABI 12) and level0's chunk widened where
# tiles of 2L take 8 waves or more (level0_chunk), as built. The library
# is built whole from this tree (lib-new, objects kept); lib-base is
# 12-06f call 1's objects linked (main's kernels before 2d1cc94). Each
# library runs with its own gpu.test (the ABI changed): new
# .carry-f4/gpu.test (rebuild it if the gpu package changed), base
# .carry-n1/gpu.test. Then part 5 again with -DZK_BITSUM_PER=2048
# (lib-bitsum: k_bitsum's blocks of 2048 items for BLS12-381's G1).
# Carry [".carry-n1", ".carry-f4"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-f4 F=/tmp/f4
mkdir -p $F/obj $F/objn
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude '*.test' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $F/base.test; gunzip -c $K/gpu.test.gz > $F/new.test; chmod +x $F/*.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
tar xzf $K/obj.tgz -C $F/obj
(cd gpu/cuda && OBJ=$F/obj PARTS="" LIB=$F/lib-base.so ./build.sh > $F/link.log 2>&1); echo "base linked rc=$? at $(el) s"
(cd gpu/cuda && OBJ=$F/objn LIB=$F/lib-new.so ./build.sh > $F/build.log 2>&1); echo "new built rc=$? at $(el) s"
grep -E "^part|error" $F/build.log | head; pack
[ -f $F/lib-new.so ] || exit 1
# BLS12-381's G1 with k_bitsum's blocks of 2048 items (ZK_BITSUM_PER, msm.cuh), part 5 again
cp -r $F/objn $F/objb
(cd gpu/cuda && OBJ=$F/objb PARTS="5" LIB=$F/lib-bitsum.so ./build.sh -DZK_BITSUM_PER=2048 > $F/build-bitsum.log 2>&1); echo "bitsum built rc=$? at $(el) s"
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 150 $F/new.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDATablesMatchCPU$|CUDAProofsVerify$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -12
(cd gpu && ZKPIPE_MSM_WINDOW=22 ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 60 $F/new.test -test.run 'CUDATablesMatchCPUBLS12381' -test.v) > $F/tests-w22.log 2>&1
echo "tests w22 rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL)" $F/tests-w22.log | head -3; pack
meas() { # tag test lib
	[ $(el) -lt 540 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$3 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 60 $2 -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-bitsum.so timeout 100 $F/new.test -test.run 'CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDAProofsVerifyBLS12381' -test.v) > $F/tests-bitsum.log 2>&1
echo "tests bitsum rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL)" $F/tests-bitsum.log | head -4
for r in 1 2; do
	meas base-$r $F/base.test $F/lib-base.so
	meas new-$r $F/new.test $F/lib-new.so
	[ -f $F/lib-bitsum.so ] && meas bitsum-$r $F/new.test $F/lib-bitsum.so
done
pack; echo "total $(el) s"
