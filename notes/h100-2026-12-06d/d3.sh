# Call 3 of 2026-12-06d: the new reduction's knobs, call 1's library, no
# rebuild (zk_config through the test's environment): segments of 2 and 4
# against 8 for both curves at 2^20 (BN254 also 2^22), and BLS12-381's G1
# 2^24 with 22-bit table windows (12 windows, 2^21 buckets: msm_segment's
# 64, or 16 and 32) against the default 20 bits. A B A B.
# Carry [".carry-n1", ".carry-d2"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-d2 F=/tmp/d3
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
gunzip -c $K/lib-new.so.gz > $F/lib-new.so
L=$F/lib-new.so
meas() { # tag bench sizes env…
	local tag=$1 bench=$2 sizes=$3; shift 3
	[ $(el) -lt 540 ] || return
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$L ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 60 $C/gpu.test -test.run '^$' -test.bench "$bench" -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	echo "$tag ($(el) s): $(grep -E "MSM|FAIL|panic" $F/measure-$tag.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
B='CUDAMeasureBLS12381$'
for r in 1 2; do
	meas bls-def-$r $B 20
	meas bls-seg2-$r $B 20 ZKPIPE_MSM_SEGMENT=2
	meas bls-seg4-$r $B 20 ZKPIPE_MSM_SEGMENT=4
done
for r in 1 2; do
	meas bn-def-$r 'CUDAMeasure$' 20,22 ZKPIPE_CUDA_MEASURE=msm
	meas bn-seg4-$r 'CUDAMeasure$' 20,22 ZKPIPE_CUDA_MEASURE=msm ZKPIPE_MSM_SEGMENT=4
done
for r in 1 2; do
	meas 24-def-$r $B 24
	meas 24-w22-$r $B 24 ZKPIPE_MSM_WINDOW=22
	meas 24-w22s16-$r $B 24 ZKPIPE_MSM_WINDOW=22 ZKPIPE_MSM_SEGMENT=16
	meas 24-w22s32-$r $B 24 ZKPIPE_MSM_WINDOW=22 ZKPIPE_MSM_SEGMENT=32
done
pack; echo "total $(el) s"
