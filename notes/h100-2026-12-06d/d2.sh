# Call 2 of 2026-12-06d: where the new reduction's time goes (ncu's kernel
# durations, G2 and G1 at 2^20), and its knobs: segment 4/16 and windows
# 18/20 at 2^20 (ZKPIPE_MSM_SEGMENT, ZKPIPE_MSM_WINDOW), against the
# defaults in the same call. Carry [".carry-n1", ".carry-d2"] (call 1's library).
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-d2 F=/tmp/d2
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
gunzip -c $K/lib-new.so.gz > $F/lib-new.so
L=$F/lib-new.so
(cd gpu && ZKPIPE_CUDA_LIB=$L ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20 timeout 200 ncu --metrics gpu__time_duration.sum \
	-k 'regex:k_(digits|runs|tiles|level|segment|bitsum|reduce|weigh|chunks)' --launch-skip 0 \
	$C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ncu.log 2>&1
echo "ncu rc=$? at $(el) s"; pack
meas() { # tag sizes env…
	local tag=$1 sizes=$2; shift 2
	[ $(el) -lt 545 ] || return
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$L ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	echo "$tag ($(el) s): $(grep -E "MSM|FAIL|panic" $F/measure-$tag.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	meas def-$r 20
	meas seg4-$r 20 ZKPIPE_MSM_SEGMENT=4
	meas seg16-$r 20 ZKPIPE_MSM_SEGMENT=16
	meas w18-$r 20 ZKPIPE_MSM_WINDOW=18
	meas w20-$r 20 ZKPIPE_MSM_WINDOW=20
done
pack; echo "total $(el) s"
