# device call 2 (2026-12-04): issue 26's rows with call 1's library (carried):
# bits 2^26 set up by the new setup (its peak RSS) and proven under a budget
# that admits one job at a time (resident 6.24 + 8.06 GiB a job: 18 GiB holds
# one, not two); one bits 2^27 set up in memory (zkpipe bench --builtin) and
# proven twice; then mulchain and bits 2^25 as time allows.
set -u
export OUT
C=$PWD/.carry-c2 F=/tmp/c2
mkdir -p $F /tmp/zkc
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe lib.so; do gunzip -c $C/$f.gz > $C/$f; done; chmod +x $C/zkpipe
export ZKPIPE_CUDA_LIB=$C/lib.so
Z=$C/zkpipe
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
free -g | head -2; df -h /tmp | tail -1
row() { # spec proofs extra…
	local spec=$1 p=$2; shift 2
	echo "## $spec × $p $* from $(el) s"
	timeout $((595 - $(el))) env KEEP=0 bash bench/scale.sh $Z $F/scale $spec $p -- --device cuda --bg2-device cuda "$@" > $F/scale-${spec/:/-}.log 2>&1
	cat $F/scale-${spec/:/-}.log; echo "at $(el) s"; pack
}
row bits:26 8 --mem-budget 18GiB
grep -E "Maximum resident|Elapsed" $F/scale/setup-bits-26.time
echo "## bits 2^27 in memory from $(el) s"
timeout $((595 - $(el))) env MEMSETUP=1 bash bench/scale.sh $Z $F/scale bits:27 2 -- --device cuda --bg2-device cuda > $F/scale-bits-27.log 2>&1
cat $F/scale-bits-27.log; echo "at $(el) s"; pack
[ $(el) -lt 440 ] && row mulchain:25 16
[ $(el) -lt 490 ] && row bits:25 16
pack; echo "total $(el) s"
