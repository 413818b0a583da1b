# Call 3 of 2026-12-06f (call 2's machine, warm): 22-bit windows with wider
# chunks at 2^24, wider chunks at 2^22, against the default. Carry
# [".carry-n1", ".carry-f2"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-f2 F=/tmp/f3
mkdir -p $F/obj
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
tar xzf $K/obj.tgz -C $F/obj
(cd gpu/cuda && OBJ=$F/obj PARTS="" LIB=$F/lib.so ./build.sh > $F/link.log 2>&1); echo "linked rc=$? at $(el) s"
L=$F/lib.so
meas() { # tag sizes env…
	local tag=$1 sizes=$2; shift 2
	[ $(el) -lt 330 ] || return
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$L ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	echo "$tag ($(el) s): $(grep -E "G1 MSM|FAIL|panic" $F/measure-$tag.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	meas def-$r 22,24
	meas w22c128-$r 24 ZKPIPE_MSM_WINDOW=22 ZKPIPE_MSM_CHUNK=128
	meas w22c256-$r 24 ZKPIPE_MSM_WINDOW=22 ZKPIPE_MSM_CHUNK=256
	meas c192-$r 22 ZKPIPE_MSM_CHUNK=192
	meas c135-$r 22 ZKPIPE_MSM_CHUNK=135
done
pack; echo "total $(el) s"
