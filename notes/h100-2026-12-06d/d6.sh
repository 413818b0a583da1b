# Call 6 of 2026-12-06d: BLS12-381's G2 level0 reading y only after
# P = x·ZZ − X (ZK_LEVEL0_LATE_Y; nvcc 11.8 on the dev box: spill stores
# 584 → 132 bytes). Part 6 is compiled both ways from this tree with the
# variant's curve.cuh and msm.cuh (.carry-d6/), each linked with call 1's
# other parts; then the BLS12-381 MSM tests with the variant and G2 2^20,
# A B A B. Carry [".carry-n1", ".carry-d6"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-d6 F=/tmp/d6
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude 'src' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
cp -r gpu/cuda $F/src && cp $K/curve.cuh $K/msm.cuh $F/src/
variant() { # name flags…
	local v=$1; shift
	mkdir -p $F/obj-$v && tar xzf $K/obj.tgz -C $F/obj-$v
	(cd $F/src && OBJ=$F/obj-$v PARTS="6" LIB=$F/lib-$v.so ./build.sh "$@" > $F/build-$v.log 2>&1)
}
variant base &
variant late -DZK_LEVEL0_LATE_Y=1 &
wait; echo "built at $(el) s"; grep -hE "^part|built|k_level0I4Fp2TI5FieldI16Bls" $F/build-*.log | cut -c1-160; pack
[ -f $F/lib-late.so ] && (cd gpu && ZKPIPE_CUDA_LIB=$F/lib-late.so timeout 60 $C/gpu.test -test.run 'CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381' -test.v > $F/tests-late.log 2>&1; echo "tests late rc=$?"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests-late.log)
meas() { # tag lib
	[ $(el) -lt 420 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=16 timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "G2 MSM|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2 3; do
	meas base-$r $F/lib-base.so
	meas late-$r $F/lib-late.so
done
[ -f $F/lib-late.so ] && gzip -c $F/lib-late.so > $OUT/lib-late.so.gz
pack; echo "total $(el) s"
