# Call 4 of 2026-12-06e: call 3's library (this tree) against main's
# (lib-base) at G1 2^24 once each; then the MSM chunk (points a thread sums
# a level: ZKPIPE_MSM_CHUNK, every MSM of the run) over call 3's library,
# 16, 128 and 256 against the defaults (G1 32, G2 64), two rounds, at G1
# 2^20 and 2^22 and G2 2^20. Carry [".carry-n1", ".carry-e4"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-e4 F=/tmp/e4
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
for v in base new; do gunzip -c $K/lib-$v.so.gz > $F/lib-$v.so; done
meas() { # tag lib sizes [chunk]
	[ $(el) -lt 300 ] || return
	(cd gpu && ZKPIPE_MSM_CHUNK=${4:-} ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$3 timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
meas new-24 $F/lib-new.so 24
meas base-24 $F/lib-base.so 24
for r in 1 2; do
	meas def-$r $F/lib-new.so 20,22
	for ch in 16 128 256; do meas chunk$ch-$r $F/lib-new.so 20,22 $ch; done
done
pack; echo "total $(el) s"
