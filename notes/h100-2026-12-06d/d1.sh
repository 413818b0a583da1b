# Call 1 of 2026-12-06d: the bucket reduction in bit classes (driver.cuh,
# reduce_buckets; msm.cuh) against 11ee52b's segments with mul_small.
# Carry [".carry-n1", ".carry-c2"]: the Go binaries, and lib-g1.so.gz (the
# library of c4a1bd2: today's main has the same kernels). Builds this tree's
# library (all nine parts) and sends back its objects; the MSM tests of both
# curves (the host and the device combine: single and batched table MSMs);
# then A B A B: BLS12-381's kernels, then BN254's.
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c2 F=/tmp/d1
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-g1.so.gz > $F/lib-old.so
(cd gpu/cuda && OBJ=$F/obj LIB=$F/lib-new.so ./build.sh > $F/build.log 2>&1); echo "built rc=$? at $(el) s"
grep -E "^part|built|error|k_segment|k_bitsum|k_weigh" $F/build.log | head -30
[ -f $F/lib-new.so ] || { pack; exit 1; }
gzip -c $F/lib-new.so > $OUT/lib-new.so.gz
tar czf $OUT/obj.tgz -C $F/obj --exclude '*.log' --exclude times .
pack
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 120 $C/gpu.test -test.run 'CUDAMatchesCPUBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPU$|CUDATailBatchMatchesSingles|CUDATablesMatchCPU' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -20; pack
meas() { # tag lib bench sizes
	[ $(el) -lt 545 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$4 timeout 60 $C/gpu.test -test.run '^$' -test.bench "$3" -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//; s/ \(medians.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	meas bls-old-$r $F/lib-old.so 'CUDAMeasureBLS12381$' 20,22
	meas bls-new-$r $F/lib-new.so 'CUDAMeasureBLS12381$' 20,22
done
meas bn-old-1 $F/lib-old.so 'CUDAMeasure$' 20,22
meas bn-new-1 $F/lib-new.so 'CUDAMeasure$' 20,22
meas bls24-old $F/lib-old.so 'CUDAMeasureBLS12381$' 24
meas bls24-new $F/lib-new.so 'CUDAMeasureBLS12381$' 24
pack; echo "total $(el) s"
