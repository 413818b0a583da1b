# device call 3 (2026-12-05), what the session's device time left allows:
# bits 2^24 under a budget that admits one job (resident ~1.6 GiB + 2.02 GiB
# a job: 4.5 GiB admits one, not two), the streamed load, every proof
# verified; call 1's library carried.
set -u
export OUT
C=$PWD/.carry-c1 F=/tmp/c3
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe lib.so; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe
export ZKPIPE_CUDA_LIB=$C/lib.so
Z=$C/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
timeout 100 env KEEP=0 bash bench/scale.sh $Z $F/scale bits:24 8 -- --device cuda --bg2-device cuda --mem-budget 4.5GiB > $F/scale-bits-24-budget.log 2>&1
grep -vE "setup phase" $F/scale-bits-24-budget.log | tail -16
grep -oE "rss [^|]*" $F/scale/prove-bits-24.log | sort -k2 -n | tail -2
pack; echo "total $(el) s"
