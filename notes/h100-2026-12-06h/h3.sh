# 12-06h call 3: table windows by group, built. BLS12-381's G1 at 20 bits
# from 2^19 bases (2^20: was 16, 2^21: 19) and its G2 at 16 bits at 2^19
# (was 20), driver.cuh's TableWindows, against call 1's library (new):
#   cand  parts 1, 5, 6, 7 of this tree (G2 at 2^19: 16)
#   g20   cand with -DZK_BLS_G2_TABLE_AT19=20 (G1's change alone)
# the rest of each from call 1's objects (parts 8 and 9 launch kernels only;
# part 1, first in the link, holds the table layout). Then cand's GPU
# tests; BLS12-381 mulchain 2^20
# streams (tails of 10^6 bases: G2 at 2^19), new cand g20 new cand; G1 at
# 2^20 and 2^21, new against cand; gnark's comparison in one run (-n 96
# --gnark-proofs 8). (Cut to fit 380 s of device time left.)
# Carry [".carry-h3"] (objn.tgz, gpu.test.gz, zkpipe.gz of this tree).
set -u
export OUT
H=$PWD/.carry-h3 F=$PWD/.cache/h3
mkdir -p $F
gunzip -c $H/gpu.test.gz > $F/new.test; gunzip -c $H/zkpipe.gz > $F/zkpipe; chmod +x $F/new.test $F/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude '*.test' --exclude zkpipe . 2>/dev/null; }
nvidia-smi --query-gpu=name --format=csv,noheader
for d in objn objc obj20; do mkdir -p $F/$d; tar xzf $H/objn.tgz -C $F/$d; done
(cd gpu/cuda && OBJ=$F/objn PARTS="" LIB=$F/lib-new.so ./build.sh > $F/link-new.log 2>&1); echo "new linked rc=$? at $(el) s"
(cd gpu/cuda && OBJ=$F/objc PARTS="1 5 6 7" LINK=0 ./build.sh > $F/build-cand.log 2>&1; echo "cand rc=$? at $(el) s") &
(cd gpu/cuda && OBJ=$F/obj20 PARTS="1 6 7" LINK=0 ./build.sh -DZK_BLS_G2_TABLE_AT19=20 > $F/build-g20.log 2>&1; echo "g20 rc=$? at $(el) s") &
wait
cp $F/objc/part5.o $F/obj20/
(cd gpu/cuda && OBJ=$F/objc PARTS="" LIB=$F/lib-cand.so ./build.sh > $F/link-cand.log 2>&1) &&
(cd gpu/cuda && OBJ=$F/obj20 PARTS="" LIB=$F/lib-g20.so ./build.sh > $F/link-g20.log 2>&1); echo "linked rc=$? at $(el) s"
tar czf $OUT/objc.tgz -C $F/objc .; pack
[ -f $F/lib-cand.so ] || exit 1
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-cand.so timeout 120 $F/new.test -test.run 'CUDAProofsVerifyBLS12381|CUDATailBatchBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPUBLS12381|CUDATablesMatchCPU$|CUDAProofsVerify$|CUDAMatchesCPU$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -12; pack
meas() { # tag lib
	[ $(el) -lt 270 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-$2.so ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=20,21 timeout 60 $F/new.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "MSM 2|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
stream() { # tag lib builtin curve [more flags]
	[ $(el) -lt 270 ] || return
	ZKPIPE_CUDA_LIB=$F/lib-$2.so timeout 80 $F/zkpipe bench --builtin $3 --constraints 1000000 --device cuda --bg2-device cuda --curve $4 ${5:---skip-gnark -n 96} > $F/stream-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "zkpipe stream|gnark groth16|ratio|error" $F/stream-$1.log | sed -E 's/ +/ /g' | tr '\n' ' ')"; pack
}
for v in new cand g20 new cand; do stream $v-$(el) $v mulchain bls12-381; done
meas new new; meas cand cand
[ $(el) -lt 250 ] && stream cand-gnark cand mulchain bls12-381 "-n 96 --gnark-proofs 8"
echo "total $(el) s"
