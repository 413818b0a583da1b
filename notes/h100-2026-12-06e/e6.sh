# Call 6 of 2026-12-06e: BLS12-381's G1 MSMs at chunk 64 (ZKPIPE_MSM_CHUNK)
# against the default 32, A B A B at 2^20, 2^22 and 2^24, over call 3's
# library (G2 at 64 either way there). Carry [".carry-n1", ".carry-e6"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-e6 F=/tmp/e6
mkdir -p $F
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-new.so.gz > $F/lib-new.so
meas() { # tag chunk
	[ $(el) -lt 150 ] || return
	(cd gpu && ZKPIPE_MSM_CHUNK=$2 ZKPIPE_CUDA_LIB=$F/lib-new.so ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $OUT/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "G1 MSM 2|FAIL|panic" $OUT/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"
}
for r in 1 2; do meas c32-$r ""; meas c64-$r 64; done
echo "total $(el) s"
