# Call 4 of 2026-12-06c: BLS12-381's lazy NTT at other register caps
# (ZK_BLS_NTT_MINB: blocks of 128 threads an SM; 5, the default, caps it at
# 102 registers, where CUDA 13 spills 132 bytes against BN254's 8). Carry
# [".carry-n1", ".carry-c2"] (.carry-c2: call 1's obj.tgz and call 2's
# library lib-c2.so.gz, the default). Part 1 is compiled once a variant, in
# parallel, and linked with call 1's other parts. About 150 s.
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c2 F=/tmp/c4
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude '*.o' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-c2.so.gz > $F/lib-d.so
for v in 4 6; do
	mkdir -p $F/obj$v && tar xzf $K/obj.tgz -C $F/obj$v
	(cd gpu/cuda && OBJ=$F/obj$v PARTS="1" LIB=$F/lib-m$v.so ./build.sh -Xptxas -v -DZK_BLS_NTT_MINB=$v > $F/build-m$v.log 2>&1) &
done
wait; echo "built at $(el) s"; grep -hE "^part |built" $F/build-m*.log; pack
ntt() { # tag lib
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=16 timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ntt-$1.log 2>&1
	echo "$1: $(grep -hE "NTT 2\^24|FAIL|panic" $F/ntt-$1.log)"; pack
}
for r in 1 2; do for v in d m4 m6; do [ -f $F/lib-$v.so ] && ntt $v-$r $F/lib-$v.so; done; done
[ -f $F/lib-m4.so ] && (cd gpu && ZKPIPE_CUDA_LIB=$F/lib-m4.so timeout 100 $C/gpu.test -test.run 'CUDAMatchesCPUBLS12381|CUDAProofsVerifyBLS12381' -test.v > $F/tests-m4.log 2>&1; echo "tests m4 rc=$?")
pack; echo "total $(el) s"
