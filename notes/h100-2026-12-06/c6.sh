# device call 6 (2026-12-06), call 1's library carried (lib.so.gz, "old").
# Issue 25's kernels, in one call:
# - the library rebuilt (A: today's code, defaults unchanged) with objects kept
#   (build.sh OBJ), and beside it two variants of parts 1 and 5 only, linked
#   with A's other parts: V1 -DZK_BLS_NTT_MINB=4 -DZK_BLS_G1_MINB=2 (the BLS Fr
#   NTT at 128 registers, no spills?; BLS G1 level0 at two blocks an SM), V2
#   V1 with -DZK_BLS_G1_PREFETCH=1; ptxas -v for the register counts;
# - while it builds, with the old library: the table window at 2^19..2^21
#   (ZKPIPE_MSM_WINDOW; msm_table_window picks 16 bits up to 2^20 bases);
# - then A, V1, V2 measured; BLS12-381 mulchain 2^20 streams, window default and 20.
set -u
export OUT
C=$PWD/.carry-d1 F=/tmp/d6
mkdir -p $F
pack() { cp gpu/cuda/obj*/part[15].log $F/ 2>/dev/null; tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe lib.so gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
B=$PWD/gpu/cuda
(cd $B && OBJ=objA ./build.sh -Xptxas -v > $F/build-A.log 2>&1; echo "A rc=$? at $(el) s" >> $F/build-A.log) &
bA=$!
(cd $B && OBJ=objV1 PARTS="1 5" LINK=0 ./build.sh -Xptxas -v -DZK_BLS_NTT_MINB=4 -DZK_BLS_G1_MINB=2 > $F/build-V1.log 2>&1) &
(cd $B && OBJ=objV2 PARTS="1 5" LINK=0 ./build.sh -Xptxas -v -DZK_BLS_NTT_MINB=4 -DZK_BLS_G1_MINB=2 -DZK_BLS_G1_PREFETCH=1 > $F/build-V2.log 2>&1) &
meas() { # tag lib sizes bench env…
	local tag=$1 lib=$2 sizes=$3 b=$4; shift 4
	[ $(el) -lt 380 ] || return
	echo "## $tag ($b, sizes $sizes) from $(el) s"
	(cd gpu && env ZKPIPE_CUDA_LIB=$lib ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes "$@" timeout 100 $C/gpu.test -test.run '^$' -test.bench "$b" -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	grep -E "MSM|NTT|FAIL|panic" $F/measure-$tag.log | sed -E 's/, gnark cpu.*//; s/ \(target[^;]*; / (/'; pack
}
for w in 0 20 19 18; do meas old-bls-w$w $C/lib.so 19,20,21 'CUDAMeasureBLS12381$' ZKPIPE_MSM_WINDOW=$w; done
for w in 0 20; do meas old-bn-w$w $C/lib.so 19,20,21 'CUDAMeasure$' ZKPIPE_MSM_WINDOW=$w; done
wait $bA; wait
grep -E "^part |rc=|error" $F/build-*.log | head -30
for v in V1 V2; do
	[ -f $B/objA/part2.o ] || break
	for p in 2 3 4 6 7; do cp $B/objA/part$p.o $B/obj$v/; done
	(cd $B && OBJ=obj$v PARTS="" LIB=lib$v.so ./build.sh >> $F/build-$v.log 2>&1) || echo "link $v failed"
done
pack
for v in A V1 V2; do
	lib=$B/lib$v.so; [ $v = A ] && lib=$B/libzkpipe_cuda.so
	[ -f $lib ] && meas new-$v $lib 20,22 'CUDAMeasureBLS12381$'
done
[ -f $B/libV1.so ] && gzip -c $B/libV1.so > $OUT/libV1.so.gz
stream() { # tag env…
	local tag=$1; shift
	[ $(el) -lt 400 ] || return
	echo "## BLS mulchain 2^20 $tag from $(el) s"
	env "$@" timeout 40 $C/zkpipe bench --builtin mulchain --curve bls12-381 --constraints 1000000 -n 96 --skip-gnark --device cuda --bg2-device cuda > $F/stream-$tag.log 2>&1
	grep -E "zkpipe stream|error" $F/stream-$tag.log | tail -2; pack
}
stream w0 ZKPIPE_CUDA_LIB=$C/lib.so
stream w20 ZKPIPE_CUDA_LIB=$C/lib.so ZKPIPE_MSM_WINDOW=20
pack; echo "total $(el) s"
