# Next session's first device call (written 2026-12-06b). Build here first:
#   mkdir -p .carry-n1 && CGO_ENABLED=0 go build -ldflags "-s -w" -o .carry-n1/zkpipe . &&
#   CGO_ENABLED=0 go test -c -o .carry-n1/gpu.test ./gpu && gzip -f .carry-n1/zkpipe .carry-n1/gpu.test
# then run `bash notes/h100-2026-12-06b/next-c1.sh` with carry [".carry-n1"]. About 450 s:
# - the library with parts 8 and 9 split from part 6 (the parts' times say
#   what the split saved: 302 s before, bound by part 6's 301; part 7's 193
#   should bound it now);
# - the kernels of both curves with the new defaults (BLS12-381 G2: early-Z
#   order, chunk 64: 26.9 ms expected against 27.9-28.0), and the chunk
#   knob where it may still pay: BLS12-381 G2 at 128, BN254 at 64 (its
#   stream read 34.70 against 33.80 at 64, one run each);
# - the streams of both curves (BN254's must be unchanged within noise).
# The library is returned as lib.so.gz.
set -u
export OUT
C=$PWD/.carry-n1 F=/tmp/n1
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe gpu.test; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
(cd gpu/cuda && OBJ=$F/obj ./build.sh -Xptxas -v > $F/build.log 2>&1); echo "built at $(el) s"; grep -E "^part " $F/build.log; pack
B=$PWD/gpu/cuda/libzkpipe_cuda.so
[ -f $B ] || { echo "no library"; exit 1; }
gzip -c $B > $OUT/lib.so.gz
meas() { # tag bench sizes [env…]
	[ $(el) -lt 540 ] || return
	local tag=$1 bench=$2 sizes=$3; shift 3
	echo "## $tag from $(el) s"
	(cd gpu && env "$@" ZKPIPE_CUDA_LIB=$B ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$sizes timeout 90 $C/gpu.test -test.run '^$' -test.bench "$bench" -test.benchtime 1x) > $F/measure-$tag.log 2>&1
	grep -E "MSM|NTT|FAIL|panic" $F/measure-$tag.log | sed -E 's/, gnark cpu.*//'; pack
}
stream() { # tag curve-flags…
	[ $(el) -lt 570 ] || return
	local tag=$1; shift
	ZKPIPE_CUDA_LIB=$B timeout 30 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda "$@" > $F/stream-$tag.log 2>&1
	echo "$tag: $(grep -E "zkpipe stream|error" $F/stream-$tag.log | tail -1)"
}
meas bls 'CUDAMeasureBLS12381$' 20,22,24
meas bn 'CUDAMeasure$' 20,22,24
stream bls-1 --curve bls12-381 -n 96
stream bn-1 -n 160
stream bls-2 --curve bls12-381 -n 96
stream bn-2 -n 160
meas bls-chunk128 'CUDAMeasureBLS12381$' 20 ZKPIPE_MSM_CHUNK=128
meas bn-chunk64 'CUDAMeasure$' 20,22,24 ZKPIPE_MSM_CHUNK=64
pack; echo "total $(el) s"
