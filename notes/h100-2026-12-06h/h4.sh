# 12-06h call 4: h3.sh cut to fit the 290 s of device time left (three
# calls refused since call 2): cand (parts 1, 5, 6, 7 of this tree: BLS12-381's
# G1 tables at 20 bits from 2^19 bases, its G2's at 16 at 2^19) over call 1's
# other objects; cand's GPU tests; BLS12-381 mulchain 2^20 streams, cand
# against call 1's library (new), C N C N. Carry [".carry-h3"].
set -u
export OUT
H=$PWD/.carry-h3 F=$PWD/.cache/h4
mkdir -p $F/objn $F/objc
gunzip -c $H/gpu.test.gz > $F/new.test; gunzip -c $H/zkpipe.gz > $F/zkpipe; chmod +x $F/new.test $F/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' --exclude '*.test' --exclude zkpipe . 2>/dev/null; }
nvidia-smi --query-gpu=name --format=csv,noheader
for d in objn objc; do tar xzf $H/objn.tgz -C $F/$d; done
(cd gpu/cuda && OBJ=$F/objn PARTS="" LIB=$F/lib-new.so ./build.sh > $F/link-new.log 2>&1)
(cd gpu/cuda && OBJ=$F/objc PARTS="1 5 6 7" LIB=$F/lib-cand.so ./build.sh > $F/build-cand.log 2>&1); echo "cand built rc=$? at $(el) s"; pack
[ -f $F/lib-cand.so ] || exit 1
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-cand.so timeout 60 $F/new.test -test.run 'CUDAProofsVerifyBLS12381|CUDATablesMatchCPUBLS12381|CUDAMatchesCPUBLS12381|CUDATablesMatchCPU$|CUDAProofsVerify$' -test.v) > $F/tests.log 2>&1
echo "tests rc=$? at $(el) s"; grep -E "^(--- |ok|FAIL|PASS)" $F/tests.log | head -8; pack
stream() { # tag lib
	ZKPIPE_CUDA_LIB=$F/lib-$2.so timeout 40 $F/zkpipe bench --builtin mulchain --constraints 1000000 --device cuda --bg2-device cuda --curve bls12-381 --skip-gnark -n 96 > $F/stream-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "zkpipe stream|error" $F/stream-$1.log | sed -E 's/ +/ /g' | tr '\n' ' ')"; pack
}
stream cand-1 cand; stream new-1 new; stream cand-2 cand; stream new-2 new
echo "total $(el) s"
