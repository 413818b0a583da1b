#!/usr/bin/env bash
# Throughput of a traced stream against an untraced one, in one session:
# the same jobs, runs alternating untraced / traced, proofs/s taken from the
# result lines (jobs ÷ the last ended_at_ms, so key loading is left out), and
# the CPU seconds (user+sys) each whole run took.
#
#   bench/tracing.sh ZKPIPE CIRCUIT_DIR JOBS ROUNDS OTLP_ENDPOINT [prove flags…]
set -euo pipefail
bin=$1 circuit=$2 n=$3 rounds=$4 endpoint=$5
shift 5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$n"); do echo "{\"id\":\"b$i\",\"generate\":{\"seed\":$i}}"; done >"$work/jobs"
# rate RESULTS: proofs/s over the stream; fails if a job failed.
rate() {
	if grep -q '"error"' "$1"; then echo "a job failed: $(grep -m1 '"error"' "$1")" >&2; exit 1; fi
	grep -o '"ended_at_ms":[0-9.]*' "$1" | cut -d: -f2 |
		awk -v n="$(wc -l <"$1")" '$1>m{m=$1} END{printf "%.3f\n", n/m*1000}'
}
# one NAME [flags]: runs the stream, prints "proofs/s cpu-seconds".
one() {
	local name=$1
	shift
	local TIMEFORMAT='%U %S'
	local t
	t=$({ time "$bin" prove --circuit "$circuit" --jobs "$work/jobs" --out "$work/out" \
		--results "$work/$name.jsonl" "$@" >/dev/null 2>"$work/$name.err"; } 2>&1) ||
		{ cat "$work/$name.err" >&2; exit 1; }
	echo "$(rate "$work/$name.jsonl") $(echo "$t" | awk '{printf "%.2f", $1+$2}')"
}
offs="" ons=""
for r in $(seq 1 "$rounds"); do
	off=$(one off "$@")
	on=$(one on --otlp-endpoint "$endpoint" "$@")
	echo "round $r: untraced ${off% *} proofs/s (${off#* } cpu-s), traced ${on% *} proofs/s (${on#* } cpu-s)"
	offs="$offs $off"
	ons="$ons $on"
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mo=$(echo "$offs" | awk '{for(i=1;i<=NF;i+=2) printf "%s ", $i}' | median)
mn=$(echo "$ons" | awk '{for(i=1;i<=NF;i+=2) printf "%s ", $i}' | median)
co=$(echo "$offs" | awk '{for(i=2;i<=NF;i+=2) printf "%s ", $i}' | median)
cn=$(echo "$ons" | awk '{for(i=2;i<=NF;i+=2) printf "%s ", $i}' | median)
awk -v mo="$mo" -v mn="$mn" -v co="$co" -v cn="$cn" -v n="$n" 'BEGIN{
	printf "median of %s proofs: untraced %.3f proofs/s, traced %.3f proofs/s (traced/untraced %.3f); cpu %.2f s vs %.2f s (%+.1f ms a proof)\n",
		n, mo, mn, mn/mo, co, cn, (cn-co)/n*1000 }'
