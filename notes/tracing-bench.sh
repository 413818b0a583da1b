#!/usr/bin/env bash
# Throughput of a traced stream against an untraced one, in one session:
# the same jobs, runs alternating untraced / traced, proofs/s taken from the
# result lines (jobs ÷ the last ended_at_ms, so key loading is left out).
#
#   notes/tracing-bench.sh ZKPIPE CIRCUIT_DIR JOBS ROUNDS OTLP_ENDPOINT [prove flags…]
set -euo pipefail
bin=$1 circuit=$2 n=$3 rounds=$4 endpoint=$5
shift 5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$n"); do echo "{\"id\":\"b$i\",\"generate\":{\"seed\":$i}}"; done >"$work/jobs"
rate() { # results file → proofs/s
	python3 -c 'import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
assert all(not r.get("error") for r in rs), "a job failed"
end=max(s["ended_at_ms"] for r in rs for s in r["stages"])
print("%.3f" % (len(rs)/end*1000))' "$1"
}
off=() on=()
for r in $(seq 1 "$rounds"); do
	"$bin" prove --circuit "$circuit" --jobs "$work/jobs" --out "$work/out" --results "$work/off.jsonl" "$@"
	off+=("$(rate "$work/off.jsonl")")
	"$bin" prove --circuit "$circuit" --jobs "$work/jobs" --out "$work/out" --results "$work/on.jsonl" --otlp-endpoint "$endpoint" "$@"
	on+=("$(rate "$work/on.jsonl")")
	echo "round $r: untraced ${off[-1]} proofs/s, traced ${on[-1]} proofs/s"
done
python3 -c 'import statistics as s,sys
off=[float(x) for x in sys.argv[1].split()]; on=[float(x) for x in sys.argv[2].split()]
mo,mn=s.median(off),s.median(on)
print("median: untraced %.3f proofs/s, traced %.3f proofs/s, traced/untraced %.3f" % (mo,mn,mn/mo))' "${off[*]}" "${on[*]}"
