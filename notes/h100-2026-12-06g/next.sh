# The next session's first device call (prepared in 2026-12-06g, not run:
# its device time was spent). It runs the library as shipped: an MSM's
# last wait sleeps through level 0 and polls only the rest (CudaDev::mark),
# which no GPU has run (12-06g call 2 polled every MSM wait throughout).
# .carry-h1 (made in 12-06g from 7c7422d's Go code; rebuild if the gpu
# package or the commands changed: CGO_ENABLED=0 go build -ldflags="-s -w"
# -o /tmp/zkpipe . and CGO_ENABLED=0 go test -c -o /tmp/gpu.test ./gpu,
# gzipped as zkpipe.gz and gpu.test.gz) also holds 12-06f's base for
# BN254's "unchanged": base-obj.tgz (call 1's objects, main before 2d1cc94)
# and base.test.gz (its ABI 11 gpu.test). 39 MB. Carry [".carry-h1"].
#  1. build whole (about 190 s); the GPU tests of both curves
#  2. BLS12-381's kernels: default against ZKPIPE_CUDA_WAIT_POLL_US=-1
#     (blocking sync throughout), A B A B
#  3. BN254's kernels (CUDAMeasure): the new library against base
#  4. streams, default against -1: BLS12-381 mulchain 2^20 (GPU-bound) and
#     bits 2^20 (CPU-bound: polling's CPU), BN254 mulchain 2^20
set -u
export OUT
H=$PWD/.carry-h1 F=$PWD/.cache/h1
mkdir -p $F/objn $F/objb
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude '*.test' --exclude zkpipe . 2>/dev/null; }
gunzip -c $H/gpu.test.gz > $F/new.test; gunzip -c $H/zkpipe.gz > $F/zkpipe; gunzip -c $H/base.test.gz > $F/base.test
chmod +x $F/new.test $F/base.test $F/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
tar xzf $H/base-obj.tgz -C $F/objb
(cd gpu/cuda && OBJ=$F/objb PARTS="" LIB=$F/lib-base.so ./build.sh > $F/link.log 2>&1); echo "base linked rc=$? at $(el) s"
(cd gpu/cuda && OBJ=$F/objn LIB=$F/lib-new.so ./build.sh > $F/build.log 2>&1); echo "new built rc=$? at $(el) s"
tar czf $OUT/objn.tgz -C $F/objn .; pack
[ -f $F/lib-new.so ] || exit 1
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 120 $F/new.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDATablesMatchCPU$|CUDAProofsVerify$|CUDAMatchesCPU$|CUDAConfigOutOfRange' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -12; pack
meas() { # tag bench test lib [env]
	[ $(el) -lt 480 ] || return
	(cd gpu && env ${5:-X=1} ZKPIPE_CUDA_LIB=$4 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 60 $3 -test.run '^$' -test.bench "$2" -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
stream() { # tag builtin curve [env]
	[ $(el) -lt 520 ] || return
	env ${4:-X=1} ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 60 $F/zkpipe bench --builtin $2 --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda --curve $3 -n 96 > $F/stream-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "zkpipe stream|error" $F/stream-$1.log | tail -1)"; pack
}
for r in 1 2; do
	meas bls-new-$r 'CUDAMeasureBLS12381$' $F/new.test $F/lib-new.so
	meas bls-block-$r 'CUDAMeasureBLS12381$' $F/new.test $F/lib-new.so ZKPIPE_CUDA_WAIT_POLL_US=-1
done
meas bn-new 'CUDAMeasure$' $F/new.test $F/lib-new.so
meas bn-base 'CUDAMeasure$' $F/base.test $F/lib-base.so
stream bls-mulchain mulchain bls12-381
stream bls-mulchain-block mulchain bls12-381 ZKPIPE_CUDA_WAIT_POLL_US=-1
stream bls-bits bits bls12-381
stream bls-bits-block bits bls12-381 ZKPIPE_CUDA_WAIT_POLL_US=-1
stream bn-mulchain mulchain bn254
pack; echo "total $(el) s"
