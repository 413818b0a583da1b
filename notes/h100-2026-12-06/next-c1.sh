# Next session's first device call (written 2026-12-06; run as
# `bash notes/h100-2026-12-06/next-c1.sh` with .carry-n1/{zkpipe,gpu.test}.gz
# built on the dev machine: CGO_ENABLED=0 go build -ldflags "-s -w" -o
# .carry-n1/zkpipe . ; CGO_ENABLED=0 go test -c -o .carry-n1/gpu.test ./gpu ;
# gzip both). About 480 s on a fresh machine:
# - the library and two variants in one build's time (bench/cuda-variants.sh):
#   early = BLS12-381 G2's additions with fewer live values (part 6),
#   earlyk = early with Karatsuba's Fp2 product (part 6; it lost to spills
#   before, 12-03d),
#   blk64 = BLS12-381 G1 level0 in blocks of 64 threads, 10 warps an SM (part 5);
# - issue 25's kernels with each (G1 2^20/2^22/2^24, G2 2^20, NTT 2^24);
# - the BLS12-381 mulchain 2^20 stream with the default library, twice
#   (confirms the 20-bit table windows from 2^19 bases: 15.3–15.4 with the
#   override on the H100, 14.4 before);
# the default library is returned as lib.so.gz for the next calls.
set -u
export OUT
C=$PWD/.carry-n1 F=/tmp/n1
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
bash bench/cuda-variants.sh $F/build 'early:6:-DZK_XYZZ_EARLY_Z=1' 'earlyk:6:-DZK_XYZZ_EARLY_Z=1 -DZK_BLS_FP2_KARATSUBA=1' \
	'blk64:5:-DZK_BLS_G1_LEVEL0_BLOCK=64'
echo "built at $(el) s"; pack
B=$PWD/gpu/cuda
[ -f $B/libzkpipe_cuda.so ] && gzip -c $B/libzkpipe_cuda.so > $OUT/lib.so.gz
meas() { # tag lib [env…]
	[ -f "$2" ] && [ $(el) -lt 540 ] || return
	local tag=$1 lib=$2; shift 2
	echo "## $tag from $(el) s"
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$lib ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,22,24 timeout 90 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	grep -E "MSM|NTT|FAIL|panic" $F/measure-$tag.log | sed -E 's/, gnark cpu.*//'; pack
}
meas A $B/libzkpipe_cuda.so
meas early $B/libearly.so
meas earlyk $B/libearlyk.so
meas blk64 $B/libblk64.so
for i in 1 2; do
	[ $(el) -lt 570 ] || break
	ZKPIPE_CUDA_LIB=$B/libzkpipe_cuda.so timeout 30 $C/zkpipe bench --builtin mulchain --curve bls12-381 --constraints 1000000 -n 96 --skip-gnark --device cuda --bg2-device cuda > $F/stream-$i.log 2>&1
	grep -E "zkpipe stream|error" $F/stream-$i.log | tail -1
done
# the runtime knobs over the default library, as time allows (no build):
# wider table windows at 2^22 and 2^24, where the sort's fixed cost is
# smaller beside BLS12-381's 2.25x additions (22 bits: 12 windows against
# 20 bits' 13; 21 and 23 bits give 13 and 12 again; BN254 lost at 22 to
# its reduction of 2^21 buckets)
meas() { :; }
meas2() { # tag sizes env
	[ $(el) -lt 560 ] || return
	local tag=$1 sizes=$2; shift 2
	echo "## $tag from $(el) s"
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$B/libzkpipe_cuda.so ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	grep -E "MSM|NTT|FAIL|panic" $F/measure-$tag.log | sed -E 's/, gnark cpu.*//'; pack
}
meas2 win22 22,24 ZKPIPE_MSM_WINDOW=22
meas2 chunk64 20,22 ZKPIPE_MSM_CHUNK=64
pack; echo "total $(el) s"
