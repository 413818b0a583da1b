# Call 7 of 2026-12-06c (script kept in notes/h100-2026-12-06c/c7.sh): the NTT
# kernels without the scaling's code except in a scaled DIF pass (k_ntt_regs's
# SCALED), against call 5's g1 library (today's default) in one call. The
# carry .carry-c7 holds kernels.cuh and zkpipe.cu of that change (made in a
# worktree while scripts/test ran on main), call 1's obj.tgz and lib-g1.so.gz.
# Parts 1 and 5 are compiled (5 as today's default), linked with call 1's
# others. About 230 s.
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c7 F=/tmp/c7
mkdir -p $F/obj
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
cp $K/kernels.cuh $K/zkpipe.cu gpu/cuda/
tar xzf $K/obj.tgz -C $F/obj
gunzip -c $K/lib-g1.so.gz > $F/lib-A.so
(cd gpu/cuda && OBJ=$F/obj PARTS="1 5" LIB=$F/lib-B.so ./build.sh -Xptxas -v > $F/build.log 2>&1); echo "built at $(el) s"; grep -E "^part |built" $F/build.log; pack
[ -f $F/lib-B.so ] || { echo "no library"; exit 1; }
gzip -c $F/lib-B.so > $OUT/lib-B.so.gz
ntt() { # tag lib
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=16 timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ntt-bls-$1.log 2>&1
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MEASURE=ntt ZKPIPE_CUDA_NTT_SIZES=24 timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasure$' -test.benchtime 1x) > $F/ntt-bn-$1.log 2>&1
	echo "$1: $(grep -hE "NTT 2\^24|FAIL|panic" $F/ntt-bls-$1.log $F/ntt-bn-$1.log | tr '\n' ' ')"; pack
}
ntt A1 $F/lib-A.so; ntt B1 $F/lib-B.so; ntt A2 $F/lib-A.so; ntt B2 $F/lib-B.so
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-B.so timeout 100 $C/gpu.test -test.run 'CUDAMatchesCPUBLS12381|CUDAProofsVerifyBLS12381|CUDAProofsVerify$|CUDAMatchesCPU$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$?"; grep -E "^(--- |ok|FAIL)" $F/tests.log | head
for c in bls12-381 bn254; do
	[ $(el) -lt 280 ] || break
	ZKPIPE_CUDA_LIB=$F/lib-B.so timeout 25 $C/zkpipe bench --builtin mulchain --curve $c --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda -n 96 > $F/stream-$c.log 2>&1
	echo "$c: $(grep -E "zkpipe stream|error" $F/stream-$c.log | tail -1)"
done
pack; echo "total $(el) s"
