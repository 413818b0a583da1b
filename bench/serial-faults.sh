#!/usr/bin/env bash
# Minor faults per proof of a stream of one job at a time: each job is sent
# once the previous one's result line is back, so a proof's minor_faults are
# the whole process's while it ran (notes/cpu-faults.md).
#
# Usage: bench/serial-faults.sh ZKPIPE CIRCUIT_DIR N OUTDIR [PROVE FLAGS…]
#   e.g. bench/serial-faults.sh ./zkpipe /tmp/zkc/mulchain-65536 16 /tmp/sf --device cpu
# Prints the first proof's faults, the median and mean of the rest, and the
# median CPU ms a proof (the stages' cpu_ms) of the rest; result lines in
# OUTDIR/results.jsonl.
set -euo pipefail
bin=$1 dir=$2 n=$3 out=$4
shift 4
name=$(basename "$dir")
mkdir -p "$out"
: >"$out/results.jsonl"
coproc PROVE { "$bin" prove --circuit "$dir" --jobs - --out "$out/proofs" --results - --mem-status 0 "$@" 2>"$out/prove.log"; }
for i in $(seq 1 "$n"); do
	printf '{"id":"j%d","circuit":"%s","generate":{"seed":%d}}\n' "$i" "$name" "$i" >&"${PROVE[1]}"
	IFS= read -r line <&"${PROVE[0]}" || { echo "zkpipe prove ended early, see $out/prove.log" >&2; exit 1; }
	printf '%s\n' "$line" >>"$out/results.jsonl"
done
exec {PROVE[1]}>&-
wait "$PROVE_PID" || { echo "zkpipe prove failed, see $out/prove.log" >&2; exit 1; }
awk '
	{ f = 0; if (match($0, /"minor_faults":[0-9]+/)) f = substr($0, RSTART + 15, RLENGTH - 15) + 0
	  if ($0 ~ /"error"/) bad++
	  c = 0; s = $0; while (match(s, /"cpu_ms":[0-9.]+/)) { c += substr(s, RSTART + 9, RLENGTH - 9); s = substr(s, RSTART + RLENGTH) }
	  if (NR == 1) first = f; else { rest[NR - 1] = f; sum += f; cpu[NR - 1] = c } }
	function median(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((k + 1) / 2)] }
	END { k = NR - 1; if (k < 1) { print "fewer than 2 proofs"; exit 1 }
	  m = median(rest, k); mean = sum / k
	  printf "proofs %d, failed %d; minor faults: first %d, median of the rest %d (%.1f%%), mean of the rest %.0f (%.1f%%); CPU ms a proof (median of the rest) %.0f\n",
	    NR, bad, first, m, first ? 100 * m / first : 0, mean, first ? 100 * mean / first : 0, median(cpu, k) }' "$out/results.jsonl"
