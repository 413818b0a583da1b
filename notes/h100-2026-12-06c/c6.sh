# Call 6 of 2026-12-06c: the library of call 5's G1 variant (BLS12-381's G1
# level0 in blocks of 128, three an SM: today's default, kernels.cuh) on the
# real GPU: the BLS12-381 CUDA tests (CUDA against the CPU, tables, tails,
# proofs verified by gnark) and the BLS12-381 stream against call 2's library,
# A B A B. Carry [".carry-n1", ".carry-c2"] (.carry-c2: lib-g1.so.gz from
# call 5, lib-c2.so.gz from call 2). About 120 s.
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-c2 F=/tmp/c6
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-g1.so.gz > $F/lib-g1.so
gunzip -c $K/lib-c2.so.gz > $F/lib-d.so
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-g1.so timeout 200 $C/gpu.test -test.run 'BLS12381' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -30; pack
stream() { # tag lib
	[ $(el) -lt 300 ] || return
	ZKPIPE_CUDA_LIB=$2 timeout 30 $C/zkpipe bench --builtin mulchain --curve bls12-381 --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda -n 96 > $F/stream-$1.log 2>&1
	echo "$1: $(grep -E "zkpipe stream|error" $F/stream-$1.log | tail -1)"
}
stream bls-d-1 $F/lib-d.so
stream bls-g1-1 $F/lib-g1.so
stream bls-d-2 $F/lib-d.so
stream bls-g1-2 $F/lib-g1.so
pack; echo "total $(el) s"
