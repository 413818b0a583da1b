# device call 2 (2026-12-05), call 1's library carried: bits 2^26 under a
# budget for one job (resident 6.21 GiB + 8.06 GiB a job: 16 GiB admits one,
# not two), then issue 26's BLS12-381 rows: bits 2^24, bits 2^26, mulchain
# 2^24 as time allows (cut to the budget row and BLS bits 2^22 when the
# session's device time ran short).
set -u
export OUT
C=$PWD/.carry-c1 F=/tmp/c2
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe lib.so; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe
export ZKPIPE_CUDA_LIB=$C/lib.so
Z=$C/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
row() { # spec proofs extra…
	local spec=$1 p=$2; shift 2
	echo "## $spec × $p $* from $(el) s"
	timeout $((190 - $(el))) env KEEP=0 bash bench/scale.sh $Z $F/scale $spec $p -- --device cuda --bg2-device cuda "$@" > $F/scale-${spec/:/-}.log 2>&1
	grep -vE "setup phase" $F/scale-${spec/:/-}.log | tail -16; echo "at $(el) s"; pack
}
row bits:26 8 --mem-budget 16GiB
grep -E "peak|rss" $F/scale/prove-bits-26.log | grep -oE "rss [^|]*" | sort -k2 -n | tail -3
[ $(el) -lt 120 ] && row bits@bls12-381:22 16
pack; echo "total $(el) s"
