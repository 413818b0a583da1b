# 12-06h call 2: table windows by knob (ZKPIPE_MSM_WINDOW) over call 1's
# library (ABI 13, its objects linked): BLS12-381's G1 at 2^20 (16 bits by
# default: 18, 19, 20) and at 2^22 and 2^23 (20 bits: 22). Rounds A B C D
# twice; a knob run's G2 and NTT lines are not the default's (the knob is
# every MSM's window). Then, on whatever card came (an H200 would be the
# issue's machine): both curves' kernels at the issue's sizes and the
# streams of call 1. Carry [".carry-h2"] (objn.tgz, gpu.test.gz, zkpipe.gz).
set -u
export OUT
H=$PWD/.carry-h2 F=$PWD/.cache/h2
mkdir -p $F/objn
gunzip -c $H/gpu.test.gz > $F/new.test; gunzip -c $H/zkpipe.gz > $F/zkpipe; chmod +x $F/new.test $F/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
tar xzf $H/objn.tgz -C $F/objn
(cd gpu/cuda && OBJ=$F/objn PARTS="" LIB=$F/lib-new.so ./build.sh > $F/link.log 2>&1); echo "linked rc=$? at $(el) s"
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude '*.test' --exclude zkpipe . 2>/dev/null; }
meas() { # tag sizes [env] [bench]
	[ $(el) -lt 420 ] || return
	(cd gpu && env ${3:-X=1} ZKPIPE_CUDA_LIB=$F/lib-new.so ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=$2 timeout 60 $F/new.test -test.run '^$' -test.bench "${4:-CUDAMeasureBLS12381\$}" -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"
	pack
}
stream() { # tag builtin curve
	[ $(el) -lt 460 ] || return
	ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 60 $F/zkpipe bench --builtin $2 --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda --curve $3 -n 96 > $F/stream-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "zkpipe stream|error" $F/stream-$1.log | tail -1)"; pack
}
for r in 1 2; do
	meas def-$r 20,22,23
	meas w22-$r 22,23 ZKPIPE_MSM_WINDOW=22
	meas w18-$r 20 ZKPIPE_MSM_WINDOW=18
	meas w19-$r 20 ZKPIPE_MSM_WINDOW=19
	meas w20-$r 20 ZKPIPE_MSM_WINDOW=20
done
meas bls 20,22,24
meas bn 20,22,24 X=1 'CUDAMeasure$'
stream bls-mulchain mulchain bls12-381
stream bls-bits bits bls12-381
stream bn-mulchain mulchain bn254
# gnark's BLS12-381 groth16.Prove beside zkpipe's in one run (n 16)
if [ $(el) -lt 380 ]; then
	ZKPIPE_CUDA_LIB=$F/lib-new.so timeout 110 $F/zkpipe bench --builtin mulchain --constraints 1000000 --device cuda --bg2-device cuda --curve bls12-381 -n 16 > $F/stream-bls-gnark.log 2>&1
	echo "gnark ($(el) s): $(grep -E "zkpipe stream|gnark groth16|ratio|error" $F/stream-bls-gnark.log | tr '\n' ' ')"; pack
fi
echo "total $(el) s"
