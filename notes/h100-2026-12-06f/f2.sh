# Call 2 of 2026-12-06f: where BLS12-381's G1 MSM spends its time at 2^22
# and 2^24 (ncu's kernel durations, clocks left alone), and the window
# knob at 2^24, chunks that fill whole waves at 2^20, against the default
# in the same call. Carry
# [".carry-n1", ".carry-f2"] (f2: call 1's objects, main's kernels).
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-f2 F=/tmp/f2
mkdir -p $F/obj
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
tar xzf $K/obj.tgz -C $F/obj
(cd gpu/cuda && OBJ=$F/obj PARTS="" LIB=$F/lib.so ./build.sh > $F/link.log 2>&1); echo "linked rc=$? at $(el) s"
L=$F/lib.so
prof() { # size: ncu's per-kernel durations over one bench run at that G1 size
	[ $(el) -lt 300 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$L ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$1 timeout 150 ncu --clock-control none \
		-k 'regex:k_(digits|runs|tiles|level|segment|bitsum|reduce|weigh|chunks)|Radix|Scan|Reduce' --metrics gpu__time_duration.sum --print-summary per-kernel \
		$C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ncu-$1.log 2>&1
	echo "ncu $1 rc=$? at $(el) s"; pack
}
meas() { # tag sizes env…
	local tag=$1 sizes=$2; shift 2
	[ $(el) -lt 470 ] || return
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$L ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	echo "$tag ($(el) s): $(grep -E "G1 MSM|FAIL|panic" $F/measure-$tag.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
# chunks that fill whole waves of level0's blocks at 2^20 (396 blocks of
# 128 resident: 64 gives 5.17 waves, 67 4.94, 84 3.94; at 2^22 64 gives
# 16.8, 68 15.8, 135 7.97); larger chunks at 2^24 (fewer partial sums)
prof 22
meas def-1 20,22,24
meas c67-1 20 ZKPIPE_MSM_CHUNK=67
meas c84-1 20 ZKPIPE_MSM_CHUNK=84
meas w22-1 24 ZKPIPE_MSM_WINDOW=22
prof 24
meas def-2 20,22,24
meas c67-2 20 ZKPIPE_MSM_CHUNK=67
meas c84-2 20 ZKPIPE_MSM_CHUNK=84
meas w22-2 24 ZKPIPE_MSM_WINDOW=22
meas c135-1 22 ZKPIPE_MSM_CHUNK=135
meas c68-1 22 ZKPIPE_MSM_CHUNK=68
meas c128-1 24 ZKPIPE_MSM_CHUNK=128
meas c256-1 24 ZKPIPE_MSM_CHUNK=256
meas def-3 22,24
meas c135-2 22 ZKPIPE_MSM_CHUNK=135
meas c128-2 24 ZKPIPE_MSM_CHUNK=128
meas c256-2 24 ZKPIPE_MSM_CHUNK=256
pack; echo "total $(el) s"
