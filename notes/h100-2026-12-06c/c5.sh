# Call 5 of 2026-12-06c: BLS12-381's level0 at three warps a scheduler. At
# 190 (G1) and 255 (G2) registers an SM's schedulers hold two warps each
# (ncu, call 1: issue slots 26-29% busy, 60% of the stalls on fixed-latency
# dependencies); a cap of 168 (blocks of 128, three an SM) holds three.
# Carry [".carry-n1", ".carry-c2"] (.carry-c2: call 1's obj.tgz and library
# lib-c1.so.gz (a881da8), call 2's lib-c2.so.gz (b344aa5, the default)).
# Parts 5 (BLS12-381 G1) and 6 (its G2 level0) are compiled with the
# variants, in parallel, and linked with call 1's other parts and this
# tree's part 1. About 420 s:
# - G1 2^20/2^22/2^24 and G2 2^20, default against each variant, A B A B;
# - BN254's stream with a881da8's library against today's, A B A B (BN254's
#   code is unchanged; call 1 read 30.96 proofs/s against 12-06b's 33.80).
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c2 F=/tmp/c5
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-c1.so.gz > $F/lib-a881.so
gunzip -c $K/lib-c2.so.gz > $F/lib-d.so
variant() { # name part flags…
	local v=$1 p=$2; shift 2
	mkdir -p $F/obj-$v && tar xzf $K/obj.tgz -C $F/obj-$v
	(cd gpu/cuda && OBJ=$F/obj-$v PARTS="1 $p" LIB=$F/lib-$v.so ./build.sh -Xptxas -v "$@" > $F/build-$v.log 2>&1)
}
variant g1 5 -DZK_BLS_G1_LEVEL0_BLOCK=128 -DZK_BLS_G1_MINB=3 &
variant g2 6 -DZK_BLS_G2_LEVEL0_BLOCK=128 -DZK_BLS_G2_LEVEL0_MINB=3 &
wait; echo "built at $(el) s"; grep -hE "^part |built|spill" $F/build-g*.log | grep -E "^part|built|k_level0" | head; pack
for v in g1 g2; do [ -f $F/lib-$v.so ] && gzip -c $F/lib-$v.so > $OUT/lib-$v.so.gz; done
meas() { # tag lib sizes
	[ $(el) -lt 500 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$3 timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1: $(grep -E "MSM|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \(target.*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	[ -f $F/lib-g1.so ] && { meas d-g1-$r $F/lib-d.so 20,22,24; meas g1-$r $F/lib-g1.so 20,22,24; }
	[ -f $F/lib-g2.so ] && { meas d-g2-$r $F/lib-d.so 16; meas g2-$r $F/lib-g2.so 16; }
done
stream() { # tag lib
	[ $(el) -lt 540 ] || return
	ZKPIPE_CUDA_LIB=$2 timeout 30 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda -n 160 > $F/stream-$1.log 2>&1
	echo "$1: $(grep -E "zkpipe stream|error" $F/stream-$1.log | tail -1)"
}
stream bn-a881-1 $F/lib-a881.so
stream bn-d-1 $F/lib-d.so
stream bn-a881-2 $F/lib-a881.so
stream bn-d-2 $F/lib-d.so
pack; echo "total $(el) s"
