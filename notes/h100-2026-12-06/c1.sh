# device call 1 (2026-12-06): the library (returned as lib.so.gz, and left in
# gpu/cuda for the next call on the warm machine); bits 2^26 under a budget
# for one job (resident ~6.2 GiB + 8.06 GiB a job: 16 GiB admits one, not
# two: issue 26's budget promise); then BLS12-381 mulchain 2^20 (issue 25:
# 14.0 proofs/s, target 15) over a longer stream, default flags and the
# transfer-stage variants one at a time.
set -u
export OUT
C=$PWD/.carry-d1 F=/tmp/d1
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
gunzip -c $C/zkpipe.gz > $C/zkpipe; chmod +x $C/zkpipe
Z=$C/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nproc; free -g | head -2; df -h /tmp | tail -1
(cd gpu/cuda && ./build.sh > $F/build.log 2>&1; echo "build rc=$?")
echo "at $(el) s"; grep -E "^part " $F/build.log
pack
[ -f gpu/cuda/libzkpipe_cuda.so ] || exit 1
gzip -c gpu/cuda/libzkpipe_cuda.so > $OUT/lib.so.gz
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
echo "## bits 2^26, --mem-budget 16GiB, from $(el) s"
timeout $((500 - $(el))) env KEEP=0 bash bench/scale.sh $Z $F/scale bits:26 8 -- --device cuda --bg2-device cuda --mem-budget 16GiB > $F/scale-bits-26-budget.log 2>&1
grep -vE "setup phase" $F/scale-bits-26-budget.log | tail -18; echo "at $(el) s"; pack
grep -hoE "rss [0-9.]+ GiB/[^|]*" $F/scale/*bits-26*.log 2>/dev/null | sort -k2 -n | tail -2
bls() { # tag flags…
	local tag=$1; shift
	[ $(el) -lt 570 ] || return
	echo "## BLS12-381 mulchain 2^20 $tag from $(el) s"
	timeout $((595 - $(el))) $Z bench --builtin mulchain --curve bls12-381 --constraints 1000000 -n 96 --skip-gnark --device cuda --bg2-device cuda "$@" > $F/bls-mulchain-20-$tag.log 2>&1
	grep -E "zkpipe stream|^transfer|^msm-h|^tail|^b-g2|^batch|error" $F/bls-mulchain-20-$tag.log | tail -7; pack
}
bls default
bls lanes8 --cuda-lanes 8
bls pinned64 --cuda-pinned 64MiB
bls tw4 --transfer-workers 4
pack; echo "total $(el) s"
