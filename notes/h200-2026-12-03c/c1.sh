# device call 1 of 2026-12-03 evening: ABI 11 build, GPU fixed-base tests, kernels, setup 2^24 CPU vs GPU
set -u
export OUT
B=$PWD/.carry-lead F=/tmp/c1
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
gunzip -kf $B/keygen.test.gz; chmod +x $B/keygen.test
for f in zkpipe gpu.test; do gunzip -kf $B/$f.gz; chmod +x $B/$f; done
nproc; free -g | head -2; df -h /tmp | tail -1
t0=$(date +%s)
(cd gpu/cuda && ./build.sh > $F/build.log 2>&1; echo $? > /tmp/b.rc) &
echo "## setup bits 2^24 on the CPU (beside the nvcc build)"
/usr/bin/time -v $B/zkpipe setup --builtin bits --constraints 15728640 --dir /tmp/zkc/cpu-bits-24 --device cpu -v > $F/setup-cpu-bits-24.log 2>&1
grep -E "compile|G1 A|G2 B|write circuit.pk|in [0-9]|Elapsed|Maximum res" $F/setup-cpu-bits-24.log
rm -rf /tmp/zkc/cpu-bits-24; pack
while [ ! -f /tmp/b.rc ]; do sleep 2; done
echo "build rc=$(cat /tmp/b.rc) after $(( $(date +%s)-t0 )) s"; grep -iE "error|spill" $F/build.log | grep -v " 0 bytes spill" | head -20
[ "$(cat /tmp/b.rc)" = 0 ] || { tail -30 $F/build.log; pack; exit 1; }
cp gpu/cuda/libzkpipe_cuda.so $OUT/
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
echo "## gpu tests: fixed base, BLS12-381, CPU match"
$B/gpu.test -test.run 'CUDAFixedBase|CUDAMatchesCPU|BLS12381|CUDAProofsVerify|CUDATables' -test.v -test.timeout 300s > $F/test-gpu.log 2>&1; echo "rc=$?"
grep -E "^\s*--- (FAIL|SKIP)|panic" $F/test-gpu.log | head; grep -cE "^\s*--- PASS" $F/test-gpu.log
$B/keygen.test -test.run 'CUDA' -test.v -test.timeout 200s > $F/test-keygen.log 2>&1; echo "keygen rc=$?"; grep -E "^\s*--- (FAIL|PASS)" $F/test-keygen.log | head
pack
echo "## kernels"
ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 $B/gpu.test -test.run CUDAMeasure -test.bench CUDAMeasure -test.benchtime 1x -test.v -test.timeout 300s 2>&1 | grep -vE "^=== RUN" > $F/measure.log
grep -E "ms|NTT|G2|G1" $F/measure.log | head -40; pack
echo "## fixed base bench"
ZKPIPE_CUDA_FB_SIZES=20,24 $B/gpu.test -test.run '^$' -test.bench CUDAFixedBase -test.benchtime 2x 2>&1 | grep -E "Benchmark|ns/op" | head -20
echo "## setup bits 2^24 on the GPU"
/usr/bin/time -v $B/zkpipe setup --builtin bits --constraints 15728640 --dir /tmp/zkc/bits-24 --device cuda -v > $F/setup-cuda-bits-24.log 2>&1
grep -E "open GPU|compile|G1 A|G1 Z|G2 B|write circuit|in [0-9]|Elapsed|Maximum res" $F/setup-cuda-bits-24.log
pack; echo "total $(( $(date +%s)-t0 )) s"
