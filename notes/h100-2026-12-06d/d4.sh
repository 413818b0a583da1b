# Call 4 of 2026-12-06d: the library as it lands (the bit-class reduction,
# BLS12-381's G2 segments of 4): built whole, the proof and MSM tests of
# both curves on the GPU, then A B A B against lib-g1 (c4a1bd2's kernels,
# 11ee52b's main): the kernels, then BLS12-381's and BN254's mulchain 2^20
# streams (default flags, every proof verified). Carry [".carry-n1", ".carry-c2"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c2 F=/tmp/d4
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-g1.so.gz > $F/lib-old.so
(cd gpu/cuda && OBJ=$F/obj LIB=$F/lib-new.so ./build.sh > $F/build.log 2>&1); echo "built rc=$? at $(el) s"
grep -E "^part|built|error" $F/build.log | head -12
[ -f $F/lib-new.so ] || { pack; exit 1; }
gzip -c $F/lib-new.so > $OUT/lib-new.so.gz
pack
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 150 $C/gpu.test -test.run 'CUDAProofsVerifyBLS12381|CUDAProofsVerify$|CUDATailBatchProofsVerify|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDAMatchesCPU$|CUDATablesMatchCPU$|CUDATailBatchMatchesSingles' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -20; pack
meas() { # tag lib bench sizes
	[ $(el) -lt 420 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$4 timeout 60 $C/gpu.test -test.run '^$' -test.bench "$3" -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	meas bls-old-$r $F/lib-old.so 'CUDAMeasureBLS12381$' 20,22
	meas bls-new-$r $F/lib-new.so 'CUDAMeasureBLS12381$' 20,22
done
stream() { # tag lib curve-flags…
	local tag=$1 lib=$2; shift 2
	[ $(el) -lt 545 ] || return
	ZKPIPE_CUDA_LIB=$lib timeout 40 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda "$@" > $F/stream-$tag.log 2>&1
	echo "$tag ($(el) s): $(grep -E "zkpipe stream|error" $F/stream-$tag.log | tail -1)"; pack
}
for r in 1 2; do
	stream bls-old-$r $F/lib-old.so --curve bls12-381 -n 96
	stream bls-new-$r $F/lib-new.so --curve bls12-381 -n 96
done
stream bn-old-1 $F/lib-old.so -n 160
stream bn-new-1 $F/lib-new.so -n 160
pack; echo "total $(el) s"
