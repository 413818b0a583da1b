#!/usr/bin/env bash
# A request of K partitions against K single jobs (issue 26 item 4): one
# line {"id":"porep-1","partitions":[…K generate seeds…]} through zkpipe
# prove, then the same K witnesses as K single jobs in one stream, each run
# in a process of its own over the same keys. The figure is the time from
# the first job's arrival in parse to the last one's end, read from the
# result lines (the request's own total_ms is that span), so key loading is
# left out of both; the wall time of each command is given too. Every
# proof then goes through gnark's verifier (zkpipe verify).
#
# Usage (with a zkpipe binary built elsewhere):
#   bench/partitions.sh ZKPIPE OUTDIR [K=10] [CONSTRAINTS=1048576] [MODE=all] [-- EXTRA PROVE FLAGS]
# MODE: setup, request, singles, summary, or all. Setup is `zkpipe setup`
# (keygen: 2 min 24 s at 16.8M constraints on the H200 host, 2026-12-03), so
# at 2^24 and above run it once and reuse its directory
# (/tmp/zkc/bits-CONSTRAINTS/bits; a link to bench/scale.sh's directory of the
# same circuit does).
set -euo pipefail
bin=$1 out=$2 k=${3:-10} size=${4:-1048576} mode=${5:-all}
shift $(( $# < 5 ? $# : 5 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
dir=/tmp/zkc/bits-$size/bits # the circuit is named after its directory: "bits"
mkdir -p "$out" /tmp/zkc

jobs() { # the request's line, and the K single jobs of the same seeds
  local parts="" i
  for i in $(seq 1 "$k"); do
    parts+="${parts:+,}{\"generate\":{\"seed\":$i}}"
  done
  echo "{\"id\":\"porep-1\",\"circuit\":\"bits\",\"partitions\":[$parts]}" > "$out/request.jsonl"
  : > "$out/singles.jsonl"
  for i in $(seq 1 "$k"); do
    echo "{\"id\":\"single-$i\",\"circuit\":\"bits\",\"generate\":{\"seed\":$i}}" >> "$out/singles.jsonl"
  done
}

run() { # run NAME: one prove over NAME.jsonl; results NAME.results, stderr NAME.log, proofs in proofs-NAME
  local name=$1 t0 t1
  rm -rf "$out/proofs-$name"
  t0=$(date +%s.%N)
  "$bin" prove --circuit "$dir" --jobs "$out/$name.jsonl" --out "$out/proofs-$name" --results "$out/$name.results" \
    "${extra[@]}" 2> "$out/$name.log" || echo "prove: exit $? (a job failed: see $name.results)" >> "$out/$name.log"
  t1=$(date +%s.%N)
  echo "wall $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s (keys loaded included)" >> "$out/$name.log"
  local proofs
  proofs=$(find "$out/proofs-$name" -name '*.proof' | sort)
  if "$bin" verify --circuit "$dir" $proofs > "$out/verify-$name.log" 2>&1; then
    echo "verify: $(echo "$proofs" | wc -l) proofs accepted by gnark" >> "$out/$name.log"
  else
    echo "verify: FAILED, see verify-$name.log" >> "$out/$name.log"
  fi
}

span() { # span FILE: ms from the first queued_at_ms to the last ended_at_ms of its result lines; and how many lines had an error
  awk '{
      s=$0
      while (match(s, /"queued_at_ms":[0-9.]+/)) { v=substr(s, RSTART+15, RLENGTH-15)+0; if (!seen || v<lo) lo=v; seen=1; s=substr(s, RSTART+RLENGTH) }
      s=$0
      while (match(s, /"ended_at_ms":[0-9.]+/)) { v=substr(s, RSTART+14, RLENGTH-14)+0; if (v>hi) hi=v; s=substr(s, RSTART+RLENGTH) }
      if ($0 ~ /"error":/) err++
    } END { printf "%.1f ms, %d line(s) with an error\n", hi-lo, err }' "$1"
}

summary() {
  local name
  for name in request singles; do
    [ -f "$out/$name.results" ] || continue
    echo "== $name ($k proofs of bits at $size constraints)"
    echo "first arrival to last end: $(span "$out/$name.results")"
    grep -E '^(wall|verify|prove)' "$out/$name.log" || true
  done
  if [ -f "$out/request.results" ]; then
    echo "request line's own total_ms: $(grep -o '"total_ms":[0-9.]*' "$out/request.results" | tail -1 | cut -d: -f2) ms (the last total_ms of the line is the request's own)"
  fi
}

case $mode in
  setup|all)
    [ -f "$dir/circuit.pk" ] || "$bin" setup --builtin bits --constraints "$size" --dir "$dir"
    ;;&
  request|singles|all) jobs ;;&
  request|all) run request ;;&
  singles|all) run singles ;;&
  summary|all) summary ;;
  setup|request|singles) ;;
  *) echo "unknown MODE $mode: want setup, request, singles, summary or all" >&2; exit 2 ;;
esac
