# Call 3 of 2026-12-06c: where BLS12-381's MSMs spend their time, and the
# run-time knobs never gridded for this curve. Carry [".carry-n1", ".carry-c2"]
# (.carry-c2/lib-c2.so.gz: call 2's library, b344aa5). About 250 s:
# - ncu's per-kernel durations of BenchmarkCUDAMeasureBLS12381 at 2^20
#   (G1 with its 16-bit table windows, G2, the NTT);
# - ZKPIPE_MSM_SEGMENT 4…64 (buckets a thread reduces; BN254's grid chose 8)
#   on BLS12-381's G1 2^20 and 2^22 and G2 2^20;
# - ZKPIPE_MSM_WINDOW 17…19 on G1 2^20 (its G2 figure is not read: the
#   override is every MSM's).
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c2 F=/tmp/c3
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
B=$F/lib.so
gunzip -c $K/lib-c2.so.gz > $B
echo "## profile from $(el) s"
(cd gpu && ZKPIPE_CUDA_LIB=$B ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20 timeout 150 \
	ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
	$C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/profile.log 2>&1
echo "ncu rc=$?"; pack
grep -E "^\s+(void )?[<(a-zA-Z_].*\(|gpu__time_duration.sum|Invocations" $F/profile.log | sed -E 's/\(const .*//; s/\(T1 .*//' | paste - - - 2>/dev/null | awk '{print}' | head -60
meas() { # tag sizes [env…]
	[ $(el) -lt 480 ] || return
	local tag=$1 sizes=$2; shift 2
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$B ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	echo "$tag: $(grep -E "MSM" $F/measure-$tag.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \(target.*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
meas default 20,22
for s in 4 16 32 64; do meas seg$s 20,22 ZKPIPE_MSM_SEGMENT=$s; done
meas default2 20,22
for w in 17 18 19; do meas win$w 20 ZKPIPE_MSM_WINDOW=$w; done
pack; echo "total $(el) s"
