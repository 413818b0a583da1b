# Call 3 of 2026-12-06e: the Montgomery steps' −q⁻¹ from constant memory
# where ptxas would fold it (Field::inv32: BLS12-381's Fr, whose q ≡ 1 mod
# 2^32 made its limb products unfused; nvcc 11.8's k_ntt_regs 7,504 → 6,584
# instructions, BN254's 6,408). The library built whole from this tree, its
# objects returned; the BLS12-381 tests and BN254's NTT test on the GPU; then
# A B A B against lib-base (main's kernels): BLS12-381's kernels, BN254's
# NTTs, and the BLS12-381 mulchain 2^20 stream. Carry [".carry-n1", ".carry-e3"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-e3 F=/tmp/e3
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-base.so.gz > $F/lib-base.so
(cd gpu/cuda && OBJ=$F/obj LIB=$F/lib-new.so ./build.sh > $F/build.log 2>&1); echo "built rc=$? at $(el) s"
grep -E "^part|built|error" $F/build.log | head -12
[ -f $F/lib-new.so ] || { pack; exit 1; }
gzip -c $F/lib-new.so > $OUT/lib-new.so.gz
tar czf $OUT/obj.tgz -C $F/obj --exclude '*.log' --exclude times .
pack
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 150 $C/gpu.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDANTTMatchesCPU|CUDAProofsVerify$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -20; pack
meas() { # tag lib bench sizes [measure]
	[ $(el) -lt 470 ] || return
	(cd gpu && ZKPIPE_CUDA_MEASURE=${5:-} ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$4 timeout 60 $C/gpu.test -test.run '^$' -test.bench "$3" -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^2[04]|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	meas bls-base-$r $F/lib-base.so 'CUDAMeasureBLS12381$' 20,22
	meas bls-new-$r $F/lib-new.so 'CUDAMeasureBLS12381$' 20,22
done
meas bn-base-1 $F/lib-base.so 'CUDAMeasure$' 20 ntt
meas bn-new-1 $F/lib-new.so 'CUDAMeasure$' 20 ntt
stream() { # tag lib curve-flags…
	local tag=$1 lib=$2; shift 2
	[ $(el) -lt 540 ] || return
	ZKPIPE_CUDA_LIB=$lib timeout 40 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda "$@" > $F/stream-$tag.log 2>&1
	echo "$tag ($(el) s): $(grep -E "zkpipe stream|error" $F/stream-$tag.log | tail -1)"; pack
}
stream bls-base-1 $F/lib-base.so --curve bls12-381 -n 96
stream bls-new-1 $F/lib-new.so --curve bls12-381 -n 96
pack; echo "total $(el) s"
