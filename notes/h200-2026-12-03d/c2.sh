# device call 2 (2026-12-03 night): nvcc of V (-DZK_BLS_FP2_WIDE=1 -DZK_BLS_LAZY=1);
# beside it the CPU backend's figures (cpumsm against gnark-crypto, the CPU
# stream against gnark, serial faults); then V's kernels, the BLS12-381
# stream and tests. Logs in $OUT/logs.tgz, the library in $OUT.
set -u
export OUT
C=$PWD/.carry-c2 F=/tmp/c2
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe gpu.test cpumsm.test; do gunzip -c $C/$f.gz > $C/$f; chmod +x $C/$f; done
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
rm -f /tmp/V.rc
(cd gpu/cuda && ./build.sh -DZK_BLS_FP2_WIDE=1 -DZK_BLS_LAZY=1 > $F/build-V.log 2>&1; echo $? > /tmp/V.rc) &
Z=$C/zkpipe MC=/tmp/zkc/mulchain@bls12-381-1000000 M20=/tmp/zkc/mulchain-1000000 M16=/tmp/zkc/mulchain-65536
nice -n 19 $Z setup --builtin mulchain --curve bls12-381 --constraints 1000000 --dir $MC --device cpu > $F/setup-mc-bls.log 2>&1
nice -n 19 $Z setup --builtin mulchain --constraints 1000000 --dir $M20 --device cpu > $F/setup-mc20.log 2>&1
nice -n 19 $Z setup --builtin mulchain --constraints 65536 --dir $M16 --device cpu > $F/setup-mc16.log 2>&1
echo "setups done at $(el) s"
while [ $(el) -lt 250 ] && [ ! -f /tmp/V.rc ]; do sleep 2; done
echo "## CPU figures from $(el) s (nvcc's last part beside them)"
$C/cpumsm.test -test.run '^$' -test.bench 'MSM/.*/.*/.*/20$' -test.benchtime 3x > $F/cpumsm.log 2>&1
grep -E "ns/op" $F/cpumsm.log | awk '{printf "%s %.1f ms\n", $1, $3/1e6}'
echo "at $(el) s"; pack
$Z bench --circuit $M20 -n 8 --device cpu --mem-status 0 > $F/cpu-stream.log 2>&1
grep -v "^bench:" $F/cpu-stream.log | tail -8; echo "at $(el) s"; pack
bash bench/serial-faults.sh $Z $M16 16 $F/sf --device cpu > $F/serial-faults.log 2>&1
tail -5 $F/serial-faults.log; echo "at $(el) s"; pack
while [ ! -f /tmp/V.rc ]; do sleep 2; done
echo "build rc=$(cat /tmp/V.rc) at $(el) s"
grep -h "spill" $F/build-V.log | grep -v " 0 bytes spill" | grep -iE "bls|Bls" | head -8
pack
[ "$(cat /tmp/V.rc)" = 0 ] || { grep -v "^ptxas info" $F/build-V.log | tail -20; exit 1; }
gzip -c gpu/cuda/libzkpipe_cuda.so > $OUT/libV.so.gz
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
meas() { # regex tag
	ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 $C/gpu.test -test.run "$1" -test.bench "$1" -test.benchtime 1x -test.v -test.timeout 200s 2>&1 | grep -vE "^=== RUN" > $F/measure-$2.log
	grep -E " ms|NTT" $F/measure-$2.log
}
meas 'CUDAMeasureBLS12381$' V-bls; echo "at $(el) s"; pack
$Z bench --circuit $MC -n 32 --skip-gnark --device cuda --bg2-device cuda --mem-status 0 > $F/stream-bls.log 2>&1
grep -v "^bench:" $F/stream-bls.log | tail -6; echo "at $(el) s"; pack
meas 'CUDAMeasure$' V-bn254; echo "at $(el) s"; pack
if [ $(el) -lt 520 ]; then
	timeout $((575 - $(el))) $C/gpu.test -test.run 'BLS12381' -test.v -test.timeout 200s > $F/test-V.log 2>&1; echo "BLS tests rc=$? at $(el) s"
	grep -E "^\s*--- FAIL|panic" $F/test-V.log | head; grep -cE "^\s*--- PASS" $F/test-V.log
fi
pack; echo "total $(el) s"
