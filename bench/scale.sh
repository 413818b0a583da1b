#!/usr/bin/env bash
# The seed's-scale table (issue 26) for one circuit on the H200 machine: setup
# time and peak RSS, key load time, a stream of P proofs (proofs/s from the
# result lines' clock), the first proof's latency, peak host RSS against what
# the governor reserved, peak device memory, minor faults per proof (the
# first against the median of the rest), every proof through gnark's
# verifier; with GNARK=1, gnark's groth16.Prove on one proof (zkpipe bench).
#
# Usage (with a zkpipe binary built elsewhere):
#   bench/scale.sh ZKPIPE OUTDIR SPEC [P=8] [-- EXTRA PROVE FLAGS]
# SPEC is CIRCUIT:LOG2 or CIRCUIT@CURVE:LOG2 (bits:24, mulchain@bls12-381:20).
# The circuit directory /tmp/zkc/CIRCUIT-LOG2 is kept for later calls on the
# same (warm) machine, and removed with KEEP=0.
#
# With MEMSETUP=1 nothing is written to disk but proofs: zkpipe bench
# --builtin sets the circuit up in memory (keys larger than the disk: a
# BN254 2^27 proving key is some 35 GiB) and proves P proofs with
# --skip-gnark, under /usr/bin/time -v; the row is the setup's time,
# proofs/s, the first proof's latency, peak RSS, peak device memory and the
# proofs gnark's verifier accepted (bench verifies every one).
#   MEMSETUP=1 bench/scale.sh ZKPIPE OUTDIR bits:27 1 -- --device cuda
set -uo pipefail
bin=$1 out=$2 spec=$3 p=${4:-8}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = "--" ] && shift
extra=("$@")
c=${spec%%:*} lg=${spec##*:} curve=bn254
[[ $c == *@* ]] && curve=${c#*@}
name=${c%@*}
dir=/tmp/zkc/$c-$lg
tag=$c-$lg
mkdir -p "$out" /tmp/zkc
# 15/16 of 2^LOG2 constraints: the builtins add a few (bits 0.16%), and a
# domain of 2^LOG2 is what the row means
nc=$(((1 << lg) - (1 << lg) / 16))
echo "== $name on $curve, $nc constraints (domain 2^$lg), $p proofs"
# peak device memory: nvidia-smi every 200 ms while FILE's command runs
devpoll() { (while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null; sleep 0.2; done) >"$1" & }
# stream FILE FIRST: proofs/s from result lines' clocks, and the latency of
# the proof with id FIRST
stream() {
	awk -v firstid="$2" '{ s=$0
	while (match(s, /"queued_at_ms":[0-9.]+/)) { v=substr(s, RSTART+15, RLENGTH-15)+0; if (!seen || v<lo) lo=v; seen=1; s=substr(s, RSTART+RLENGTH) }
	s=$0
	while (match(s, /"ended_at_ms":[0-9.]+/)) { v=substr(s, RSTART+14, RLENGTH-14)+0; if (v>hi) hi=v; s=substr(s, RSTART+RLENGTH) }
	if ($0 ~ /"error":/) err++; n++
	s=$0; e=0
	while (match(s, /"ended_at_ms":[0-9.]+/)) { v=substr(s, RSTART+14, RLENGTH-14)+0; if (v>e) e=v; s=substr(s, RSTART+RLENGTH) }
	end[n]=e
	if (index($0, "\"id\":\"" firstid "\"") && match($0, /"total_ms":[0-9.]+/)) first=substr($0, RSTART+11, RLENGTH-11)
} END { printf "stream: %d proofs in %.2f s, %.3f proofs/s (first arrival to last end), %d with an error; first proof %.0f ms\n", n, (hi-lo)/1000, n*1000/(hi-lo), err, first
	# the second half of the stream, end to end: the steady rate without the ramp
	for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (end[j]<end[i]) { t=end[i]; end[i]=end[j]; end[j]=t }
	m=int(n/2); if (m>=1 && n>m && end[n]>end[m]) printf "steady: %.3f proofs/s over the last %d proofs (end of proof %d to end of proof %d)\n", (n-m)*1000/(end[n]-end[m]), n-m, m, n }' "$1"
}

if [ "${MEMSETUP:-0}" = 1 ]; then
	# bench's figures (stdout) apart from time -v and its status lines (stderr)
	devpoll "$out/devmem-$tag.log"
	poll=$!
	/usr/bin/time -v "$bin" bench --builtin "$name" --curve "$curve" --constraints $nc -n "$p" --skip-gnark -v \
		--out "$out/proofs-$tag" --results "$out/results-$tag.jsonl" --mem-status 1s "${extra[@]}" \
		>"$out/bench-$tag.log" 2>"$out/bench-$tag.time"
	rc=$?
	kill $poll 2>/dev/null
	grep -E "^setup: " "$out/bench-$tag.log" # its time: compile and keys, in memory
	grep -E " wall .* cpu$" "$out/bench-$tag.time" | sed 's/^zkpipe bench --builtin: /  setup phase /' # bench -v
	[ -s "$out/results-$tag.jsonl" ] && stream "$out/results-$tag.jsonl" b0
	grep -E "^zkpipe stream: " "$out/bench-$tag.log" # from the engine open (keys resident) to the last proof
	echo "bench: exit $rc, $(grep -oE 'Elapsed .*: .*' "$out/bench-$tag.time" | sed 's/.*: //') wall, peak RSS $(awk '/Maximum resident/ {printf "%.2f GiB", $NF/1048576}' "$out/bench-$tag.time")"
	sort -n "$out/devmem-$tag.log" | tail -1 | awk '{printf "peak device memory (nvidia-smi): %.2f GiB\n", $1/1024}'
	# bench checks every proof with gnark's verifier, and fails at the first it rejects
	if [ $rc = 0 ] && grep -q "all verified by gnark" "$out/bench-$tag.log"; then
		echo "verify: $(ls "$out/proofs-$tag"/*.proof | wc -l) proofs accepted by gnark (bench's check of each)"
	else
		echo "verify: FAILED ($(grep -v "Command being timed" "$out/bench-$tag.time" | grep -m1 "zkpipe:" || tail -1 "$out/bench-$tag.log"))"
	fi
	rm -rf "$out/proofs-$tag"
	exit 0
fi

if [ ! -f "$dir/circuit.pk" ]; then
	/usr/bin/time -v "$bin" setup --builtin "$name" --curve "$curve" --constraints $nc --dir "$dir" -v \
		>"$out/setup-$tag.log" 2>"$out/setup-$tag.time"
	grep -v "ceremony" "$out/setup-$tag.log" | tail -1
	echo "setup: $(grep -oE 'Elapsed .*: .*' "$out/setup-$tag.time" | sed 's/.*: //') wall, peak RSS $(awk '/Maximum resident/ {printf "%.2f GiB", $NF/1048576}' "$out/setup-$tag.time")"
	grep -E " wall .* cpu$" "$out/setup-$tag.time" | sed 's/^zkpipe setup: /  setup phase /' # setup -v
fi
ls -l "$dir" | awk '/circuit.pk/ {printf "proving key: %.2f GiB\n", $5/2^30}'

: >"$out/jobs-$tag.jsonl"
for i in $(seq 1 "$p"); do
	echo "{\"id\":\"j$i\",\"circuit\":\"$(basename "$dir")\",\"generate\":{\"seed\":$i}}" >>"$out/jobs-$tag.jsonl"
done
devpoll "$out/devmem-$tag.log"
poll=$!
t0=$(date +%s.%N)
/usr/bin/time -v "$bin" prove --circuit "$dir" --jobs "$out/jobs-$tag.jsonl" --out "$out/proofs-$tag" \
	--results "$out/results-$tag.jsonl" --mem-status 1s "${extra[@]}" 2>&1 >/dev/null |
	while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$out/prove-$tag.log"
kill $poll 2>/dev/null
# key load: from the command's start to its start line (the budget line comes once the keys are resident)
awk -v t0="$t0" '/memory budget/ && !done {printf "key load (start to the budget line): %.1f s\n", $1-t0; done=1}' "$out/prove-$tag.log"
grep -m1 "memory budget" "$out/prove-$tag.log" | cut -d' ' -f2-
stream "$out/results-$tag.jsonl" j1
# faults per proof in stream order: the first against the median of the rest
awk '{ id=$0; sub(/.*"id":"j/, "", id); sub(/".*/, "", id)
	f=0; if (match($0, /"minor_faults":[0-9]+/)) f=substr($0, RSTART+15, RLENGTH-15)
	print id, f }' "$out/results-$tag.jsonl" | sort -n | awk '{ f[NR]=$2; line=line " " $2 }
	END { m=NR-1; for (i=2;i<=NR;i++) r[i-1]=f[i]; asort_n=m
		for (i=1;i<=m;i++) for (j=i+1;j<=m;j++) if (r[j]<r[i]) { t=r[i]; r[i]=r[j]; r[j]=t }
		med = m ? (m%2 ? r[(m+1)/2] : (r[m/2]+r[m/2+1])/2) : 0
		printf "minor faults per proof:%s\nfirst %d, median of the rest %d (%.1f%% of the first)\n", line, f[1], med, f[1] ? 100*med/f[1] : 0 }'
# host peak RSS against the governor's resident + most reserved at once (the status lines)
peak=$(awk '/Maximum resident/ {print $NF*1024}' "$out/prove-$tag.log")
awk -v peak="$peak" 'function b(v, u) { return v * (u=="KiB" ? 2^10 : u=="MiB" ? 2^20 : u=="GiB" ? 2^30 : u=="TiB" ? 2^40 : 1) }
	/resident [0-9.]+ [KMGT]?i?B, [0-9]+ jobs in \(/ {
		s=$0; sub(/.*resident /, "", s); split(s, a, /[ ,()]+/); res=b(a[1], a[2])
		s=$0; sub(/.* jobs in \(/, "", s); split(s, c, /[ )]+/); inflight=b(c[1], c[2])
		if (res+inflight > most) { most=res+inflight; rr=res; ii=inflight } }
	/ rss [0-9.]+ [KMGT]?i?B\// {
		# each status line: rss less what the governor counts reusable (idle pooled
		# buffers, free heap) against resident + reserved at that moment
		s=$0; sub(/.* rss /, "", s); split(s, r, /[ \/]+/); now=b(r[1], r[2]); reuse=0
		if (match($0, /, [0-9.]+ [KMGT]?i?B reusable/)) { split(substr($0, RSTART+2, RLENGTH-2), u, / /); reuse=b(u[1], u[2]) }
		s=$0; sub(/.*resident /, "", s); split(s, a2, /[ ,()]+/); res2=b(a2[1], a2[2])
		s=$0; sub(/.* jobs in \(/, "", s); split(s, c2, /[ )]+/); cov=res2+b(c2[1], c2[2])
		if (cov > 0 && (now-reuse)/cov > worst) { worst=(now-reuse)/cov; wn=now; wu=reuse; wc=cov } }
	END { printf "peak host RSS %.2f GiB; governor: resident %.2f GiB + at most %.2f GiB reserved at once = %.2f GiB (peak/reserved %.2f)\n", peak/2^30, rr/2^30, ii/2^30, most/2^30, most ? peak/most : 0
		if (wc) printf "worst status line: rss %.2f GiB − reusable %.2f GiB against resident + reserved %.2f GiB (%.2f)\n", wn/2^30, wu/2^30, wc/2^30, worst }' "$out/prove-$tag.log"
sort -n "$out/devmem-$tag.log" | tail -1 | awk '{printf "peak device memory (nvidia-smi): %.2f GiB\n", $1/1024}'
grep "admitted" "$out/prove-$tag.log" | tail -1 | sed 's/.*| admitted/admitted/'
if "$bin" verify --circuit "$dir" "$out/proofs-$tag"/*.proof >"$out/verify-$tag.log" 2>&1; then
	echo "verify: $(ls "$out/proofs-$tag"/*.proof | wc -l) proofs accepted by gnark"
else
	echo "verify: FAILED ($(tail -1 "$out/verify-$tag.log"))"
fi
rm -rf "$out/proofs-$tag"
if [ "${GNARK:-0}" = 1 ]; then
	"$bin" bench --circuit "$dir" -n 1 --mem-status 0 "${extra[@]}" 2>&1 | tee "$out/gnark-$tag.log" | grep -E "gnark|zkpipe stream|ratio"
fi
[ "${KEEP:-1}" = 0 ] && rm -rf "$dir"
exit 0
