# Device call 2 of 2026-12-06g: this tree (ABI 13) built whole: the host's
# products on 64-bit limbs (ZK_MUL64_HERE: the Horner over the class sums),
# bitsum_per (k_bitsum's blocks widen to 2048 items while 256 blocks
# remain), host waits that poll every 20 µs (zk_config.wait_poll_us)
# instead of blocking sync, and the MSM's fullest bucket read while level0
# runs (to_host_early). Part 5 (BLS12-381's G1 MSM) again three times,
# beside the whole build: -DZK_BITSUM_PER_MAX=256 (the fixed blocks of
# before), -DZK_HOST_MUL64=0 (the emulated 32-bit chains on the host) and
# -DZK_MSM_EARLY_BOUND=0 (the bucket read before level0), each linked
# with the whole build's other parts. Then A B rounds, the knobs
# ZKPIPE_CUDA_WAIT_POLL_US=-1 (blocking sync, the old default) and
# ZKPIPE_CUDA_SPIN=1 over the new library. Carry [".carry-g2"].
set -u
export OUT
K=$PWD/.carry-g2 F=$PWD/.cache/g2
mkdir -p $F/objn $F/objb $F/objh $F/obje
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude '*.test' . 2>/dev/null; }
gunzip -c $K/gpu.test.gz > $F/new.test; chmod +x $F/*.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
(cd gpu/cuda && OBJ=$F/objb PARTS="5" LINK=0 ./build.sh -DZK_BITSUM_PER_MAX=256 > $F/build-bitsum256.log 2>&1) &
(cd gpu/cuda && OBJ=$F/objh PARTS="5" LINK=0 ./build.sh -DZK_HOST_MUL64=0 > $F/build-hostmul32.log 2>&1) &
(cd gpu/cuda && OBJ=$F/obje PARTS="5" LINK=0 ./build.sh -DZK_MSM_EARLY_BOUND=0 > $F/build-late.log 2>&1) &
(cd gpu/cuda && OBJ=$F/objn LIB=$F/lib-new.so ./build.sh > $F/build.log 2>&1); echo "new built rc=$? at $(el) s"
wait
for v in b h e; do for p in 1 2 3 4 6 7 8 9; do cp $F/objn/part$p.o $F/obj$v/; done; done
(cd gpu/cuda && OBJ=$F/objb PARTS="" LIB=$F/lib-bitsum256.so ./build.sh >> $F/build-bitsum256.log 2>&1); echo "bitsum256 linked rc=$? at $(el) s"
(cd gpu/cuda && OBJ=$F/objh PARTS="" LIB=$F/lib-hostmul32.so ./build.sh >> $F/build-hostmul32.log 2>&1); echo "hostmul32 linked rc=$? at $(el) s"
(cd gpu/cuda && OBJ=$F/obje PARTS="" LIB=$F/lib-late.so ./build.sh >> $F/build-late.log 2>&1); echo "late linked rc=$? at $(el) s"
grep -E "^part|error" $F/build.log | head -12
tar czf $OUT/objn.tgz -C $F/objn . ; pack
[ -f $F/lib-new.so ] || exit 1
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 120 $F/new.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDATablesMatchCPU$|CUDAProofsVerify$|CUDAMatchesCPU$|CUDAConfig' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -12; pack
meas() { # tag lib [env]
	[ $(el) -lt 430 ] || return
	(cd gpu && env ${3:-X=1} ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 60 $F/new.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
round() {
	meas new-$1 $F/lib-new.so
	meas block-$1 $F/lib-new.so ZKPIPE_CUDA_WAIT_POLL_US=-1
	meas late-$1 $F/lib-late.so
	meas spin-$1 $F/lib-new.so ZKPIPE_CUDA_SPIN=1
}
round 1
round 2
meas bitsum256 $F/lib-bitsum256.so
meas hostmul32 $F/lib-hostmul32.so
meas seg4 $F/lib-new.so ZKPIPE_MSM_SEGMENT=4 # 2^20's segment kernel: 4,096 threads, 283 µs
grep -h "device:" $F/measure-new-1.log $F/measure-block-1.log | head -2
pack; echo "total $(el) s"
