# Device call 3 of 2026-12-06g (the warm machine of call 2, its last 115 s):
# base (12-06f call 1's objects: main before 2d1cc94, ABI 11) beside the
# new library of call 2 on the same machine. Carry [".carry-n1", ".carry-f4", ".carry-g2"].
set -u
F=$PWD/.cache/g2 B=$PWD/.cache/g3
mkdir -p $B/obj
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
gunzip -c .carry-n1/gpu.test.gz > $B/base.test; chmod +x $B/base.test
tar xzf .carry-f4/obj.tgz -C $B/obj
(cd gpu/cuda && OBJ=$B/obj PARTS="" LIB=$B/lib-base.so ./build.sh > $B/link.log 2>&1); echo "base linked rc=$? at $(el) s"
meas() { # tag test lib
	(cd gpu && ZKPIPE_CUDA_LIB=$3 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 40 $2 -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $OUT/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|FAIL|panic" $OUT/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"
}
meas base $B/base.test $B/lib-base.so
meas new-3 $F/new.test $F/lib-new.so
