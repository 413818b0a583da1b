# device call 3 (2026-12-04): bits 2^27 set up in memory and proven (tail MSMs
# one at a time where two do not fit beside the key), then mulchain 2^26.
set -u
export OUT
C=$PWD/.carry-c3 F=/tmp/c3
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe lib.so; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe
export ZKPIPE_CUDA_LIB=$C/lib.so
Z=$C/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "## bits 2^27 in memory"
timeout 250 env MEMSETUP=1 bash bench/scale.sh $Z $F/scale bits:27 3 -- --device cuda --bg2-device cuda > $F/scale-bits-27.log 2>&1
cat $F/scale-bits-27.log; echo "at $(el) s"; pack
grep -m3 '"error"' $F/scale/results-bits-27.jsonl | cut -c1-300
if [ $(el) -lt 160 ]; then
	echo "## mulchain:26 × 8 from $(el) s"
	timeout $((318 - $(el))) env KEEP=0 bash bench/scale.sh $Z $F/scale mulchain:26 8 -- --device cuda --bg2-device cuda > $F/scale-mulchain-26.log 2>&1
	cat $F/scale-mulchain-26.log; echo "at $(el) s"
fi
pack; echo "total $(el) s"
