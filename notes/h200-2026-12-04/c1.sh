# device call 1 (2026-12-04): the library (ZK_BLS_LAZY now the default), its
# BLS12-381 device tests, kernels of both curves; mulchain 2^24 keys on the CPU
# beside nvcc's last part, then its stream (issue 26's row) and gnark's Prove.
set -u
export OUT
C=$PWD/.carry-c1 F=/tmp/c1
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe gpu.test keygen.test; do gunzip -c $C/$f.gz > $C/$f; chmod +x $C/$f; done
Z=$C/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nproc; free -g | head -2; df -h /tmp | tail -1
rm -f /tmp/b.rc
(cd gpu/cuda && ./build.sh > $F/build.log 2>&1; echo $? > /tmp/b.rc) &
while [ $(el) -lt 200 ] && [ ! -f /tmp/b.rc ]; do sleep 2; done
echo "## mulchain 2^24 keys on the CPU from $(el) s (beside nvcc)"
/usr/bin/time -v nice -n 10 $Z setup --builtin mulchain --constraints 15728640 --dir /tmp/zkc/mulchain-24 --device cpu -v > $F/setup-cpu-mulchain-24.log 2>&1
grep -E "compile|G1 A|G2 B|write circuit|in [0-9]|Elapsed|Maximum res" $F/setup-cpu-mulchain-24.log; echo "at $(el) s"; pack
while [ ! -f /tmp/b.rc ]; do sleep 2; done
echo "build rc=$(cat /tmp/b.rc) at $(el) s"
grep -h "spill" $F/build.log | grep -v " 0 bytes spill" | head -8
pack
[ "$(cat /tmp/b.rc)" = 0 ] || { grep -v "^ptxas info" $F/build.log | tail -20; exit 1; }
gzip -c gpu/cuda/libzkpipe_cuda.so > $OUT/lib.so.gz
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
echo "## gpu tests (BLS12-381 with lazy G1 the default; BN254)"
timeout 120 $C/gpu.test -test.run 'CUDA' -test.v -test.timeout 110s > $F/test-gpu.log 2>&1; echo "rc=$? at $(el) s"
grep -E "^\s*--- (FAIL|SKIP)|panic" $F/test-gpu.log | head; grep -cE "^--- PASS" $F/test-gpu.log; pack
meas() { # regex tag
	ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 100 $C/gpu.test -test.run "$1" -test.bench "$1" -test.benchtime 1x -test.v -test.timeout 90s 2>&1 | grep -vE "^=== RUN" > $F/measure-$2.log
	grep -E " ms|NTT" $F/measure-$2.log
}
meas 'CUDAMeasureBLS12381$' bls; echo "at $(el) s"; pack
meas 'CUDAMeasure$' bn254; echo "at $(el) s"; pack
if [ $(el) -lt 480 ]; then
	echo "## mulchain 2^24 stream of 16 from $(el) s"
	timeout $((590 - $(el))) bash bench/scale.sh $Z $F/scale mulchain:24 16 -- --device cuda --bg2-device cuda > $F/scale-mulchain-24.log 2>&1
	cat $F/scale-mulchain-24.log; echo "at $(el) s"; pack
fi
if [ $(el) -lt 500 ]; then
	echo "## gnark's Prove at 2^24 (mulchain) from $(el) s"
	timeout $((592 - $(el))) $Z bench --circuit /tmp/zkc/mulchain-24 -n 1 --mem-status 0 --device cuda --bg2-device cuda > $F/gnark-mulchain-24.log 2>&1
	grep -vE "^bench:" $F/gnark-mulchain-24.log | tail -8
fi
pack; echo "total $(el) s"
