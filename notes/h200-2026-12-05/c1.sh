# device call 1 (2026-12-05): the library (build.sh now times each part);
# the streamed key load (a key file's bases from the file to the GPU, chunk
# by chunk) on a small circuit, then bits 2^26 under a budget that admits one
# job (issue 26's budget promise: peak RSS of the load and the stream);
# then BLS12-381 mulchain 2^20 (issue 25) as time allows.
set -u
export OUT
C=$PWD/.carry-c1 F=/tmp/c1
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
gunzip -c $C/zkpipe.gz > $C/zkpipe; chmod +x $C/zkpipe
Z=$C/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nproc; free -g | head -2; df -h /tmp | tail -1
(cd gpu/cuda && ./build.sh > $F/build.log 2>&1; echo "build rc=$?")
echo "at $(el) s"; grep -E "^part " $F/build.log
grep -h "spill" $F/build.log | grep -v " 0 bytes spill" | head -8
pack
[ -f gpu/cuda/libzkpipe_cuda.so ] || exit 1
gzip -c gpu/cuda/libzkpipe_cuda.so > $OUT/lib.so.gz
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
echo "## streamed load, small: bits 2^16 from $(el) s"
timeout 90 env KEEP=0 bash bench/scale.sh $Z $F/scale bits:16 8 -- --device cuda --bg2-device cuda > $F/scale-bits-16.log 2>&1
tail -12 $F/scale-bits-16.log; pack
echo "## bits 2^26 one job at a time (--mem-budget 14GiB) from $(el) s"
timeout $((560 - $(el))) env KEEP=0 bash bench/scale.sh $Z $F/scale bits:26 8 -- --device cuda --bg2-device cuda --mem-budget 14GiB > $F/scale-bits-26-budget.log 2>&1
cat $F/scale-bits-26-budget.log | tail -25; echo "at $(el) s"; pack
if [ $(el) -lt 540 ]; then
	echo "## BLS12-381 mulchain 2^20 from $(el) s"
	timeout $((595 - $(el))) $Z bench --builtin mulchain --curve bls12-381 --constraints 1000000 -n 48 --skip-gnark --device cuda --bg2-device cuda > $F/bench-bls-mulchain-20.log 2>&1
	grep -E "proofs/s|verified|error" $F/bench-bls-mulchain-20.log | tail -4
fi
pack; echo "total $(el) s"
