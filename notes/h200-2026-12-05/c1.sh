# device call 1 (2026-12-05): the library (build.sh now times each part), then
# BLS12-381 streams at 2^20 (issue 25: mulchain ≥ 15, bits ≥ 25 proofs/s), then
# bits 2^24 under a budget that admits one job (how much a job holds beyond
# its reservation, the ~2 GiB a job seen at 2^26), with gctrace.
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
b() { # tag args…
	local tag=$1; shift
	echo "## $tag from $(el) s"
	timeout 90 $Z bench "$@" --device cuda --bg2-device cuda > $F/bench-$tag.log 2>&1
	grep -E "proofs/s|verified|error" $F/bench-$tag.log | tail -4; pack
}
b bls-mulchain-20 --builtin mulchain --curve bls12-381 --constraints 1000000 -n 48
b bls-bits-20 --builtin bits --curve bls12-381 --constraints 1000000 -n 48 --skip-gnark
b bls-mulchain-20-s3 --builtin mulchain --curve bls12-381 --constraints 1000000 -n 48 --cuda-compute-streams 3 --skip-gnark
b bn-mulchain-20 --builtin mulchain --constraints 1000000 -n 48 --skip-gnark
echo "## bits 2^24 one job at a time, gctrace, from $(el) s"
timeout $((590 - $(el))) env KEEP=0 GODEBUG=gctrace=1 bash bench/scale.sh $Z $F/scale bits:24 12 -- --device cuda --bg2-device cuda --mem-budget 3GiB > $F/scale-bits-24-budget.log 2>&1
tail -30 $F/scale-bits-24-budget.log; echo "at $(el) s"; pack
echo "total $(el) s"
