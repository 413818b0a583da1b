# Call 5 of 2026-12-06e: BLS12-381's G2 MSMs sum 128 points a thread by
# default (MsmChunk; call 4 measured it as ZKPIPE_MSM_CHUNK). Part 1 (the
# entry points, whose host code plans the MSMs) compiled from this tree and
# linked with call 3's other parts (lib-chunk); the BLS12-381 tests on the
# GPU; A B A B against call 3's library (lib-new): the kernels, then the
# BLS12-381 mulchain 2^20 stream; then G1 with ZKPIPE_MSM_CHUNK=64 and 128
# at 2^20, 2^22 and 2^24. Carry [".carry-n1", ".carry-e5"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-e5 F=/tmp/e5
mkdir -p $F/obj
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-new.so.gz > $F/lib-new.so
tar xzf $K/obj.tgz -C $F/obj
(cd gpu/cuda && OBJ=$F/obj PARTS="1" LIB=$F/lib-chunk.so ./build.sh > $F/build.log 2>&1); echo "built rc=$? at $(el) s"
grep -E "^part|built|error" $F/build.log | head -4
[ -f $F/lib-chunk.so ] || { pack; exit 1; }
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-chunk.so timeout 120 $C/gpu.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDAProofsVerify$|CUDATablesMatchCPU$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -20; pack
meas() { # tag lib sizes [chunk]
	[ $(el) -lt 330 ] || return
	(cd gpu && ZKPIPE_MSM_CHUNK=${4:-} ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$3 timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	meas new-$r $F/lib-new.so 20,22
	meas chunk-$r $F/lib-chunk.so 20,22
done
stream() { # tag lib curve-flags…
	local tag=$1 lib=$2; shift 2
	[ $(el) -lt 300 ] || return
	ZKPIPE_CUDA_LIB=$lib timeout 40 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda "$@" > $F/stream-$tag.log 2>&1
	echo "$tag ($(el) s): $(grep -E "zkpipe stream|error" $F/stream-$tag.log | tail -1)"; pack
}
stream bls-new-1 $F/lib-new.so --curve bls12-381 -n 96
stream bls-chunk-1 $F/lib-chunk.so --curve bls12-381 -n 96
meas g1c64 $F/lib-chunk.so 20,22,24 64
meas g1c128 $F/lib-chunk.so 20,22,24 128
meas g1def $F/lib-chunk.so 24
pack; echo "total $(el) s"
