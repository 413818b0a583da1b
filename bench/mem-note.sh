#!/usr/bin/env bash
# The memory governor's closing note (issue 3), on the H200 machine: a stream
# of PROOFS proofs of a mulchain circuit of CONSTRAINTS constraints, unbounded
# and then with a budget that fits at most three jobs, compared.
#
# Usage (with a zkpipe binary built elsewhere):
#   bench/mem-note.sh ZKPIPE OUTDIR [PROOFS=100] [CONSTRAINTS=4194304] [MODE=all] [-- EXTRA PROVE FLAGS]
# MODE: setup, unbounded, bounded, summary, or all (each of the first three
# fits one 10-minute command at 2^22 on the GPU; run them one by one if needed).
#
# The bounded budget is resident + 3.5 footprints, read from the unbounded run
# (its start line and result lines): three jobs fit, a fourth does not, and
# half a job is left for garbage, so the Go heap is not squeezed into
# returning pages it would fault in again the next proof.
set -euo pipefail
bin=$1 out=$2 n=${3:-100} size=${4:-4194304} mode=${5:-all}
shift $(( $# < 5 ? $# : 5 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
dir=/tmp/zkc/mulchain-$size
mkdir -p "$out" /tmp/zkc

bytes() { # "3.20 GiB" → bytes
  awk -v v="$1" -v u="$2" 'BEGIN { m["B"]=1; m["KiB"]=1024; m["MiB"]=1048576; m["GiB"]=1073741824; m["TiB"]=1099511627776; printf "%.0f", v*m[u] }'
}

run() { # run NAME FLAGS…: one stream, result lines in NAME.jsonl, stderr in NAME.log
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$bin" prove --circuit "$dir" --jobs "$out/jobs.jsonl" --out "$out/proofs-$name" --results "$out/$name.jsonl" \
    "${extra[@]}" "$@" 2> >(tee "$out/$name.log" | grep -v '^zkpipe: [0-9]* proofs' >&2)
  t1=$(date +%s.%N)
  echo "wall $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s" >> "$out/$name.log"
  # every proof through gnark's verifier
  if "$bin" verify --circuit "$dir" "$out/proofs-$name"/*.proof > "$out/verify-$name.log" 2>&1; then
    echo "verify: $(ls "$out/proofs-$name"/*.proof | wc -l) proofs accepted by gnark" >> "$out/$name.log"
  else
    echo "verify: FAILED, see verify-$name.log" >> "$out/$name.log"
  fi
}

summary() { # summary NAME: the figures of one run
  local f=$out/$1.jsonl log=$out/$1.log
  [ -f "$f" ] || return 0
  echo "== $1"
  grep -m1 'memory budget' "$log" || true
  grep '^zkpipe: [0-9]* proofs' "$log" | tail -1
  grep '^wall' "$log" | tail -1
  grep '^verify' "$log" | tail -1
  # per job: id, minor faults, rss peak; jobs are j1…jN in stream order
  awk '{
      id=$0; sub(/.*"id":"/, "", id); sub(/".*/, "", id); sub(/^j/, "", id)
      f=0; if (match($0, /"minor_faults":[0-9]+/)) f=substr($0, RSTART+15, RLENGTH-15)
      r=0; if (match($0, /"rss_peak_bytes":[0-9]+/)) r=substr($0, RSTART+17, RLENGTH-17)
      e=($0 ~ /"error":/)
      print id, f, r, e
    }' "$f" | sort -n > "$out/$1.faults"
  awk -v budget_line="$(grep -m1 'memory budget' "$log" || true)" '
    { n++; f[n]=$2; if ($3>peak) peak=$3; err+=$4; if (NR<=3) wave+=$2 }
    END {
      m=0; for (i=2;i<=n;i++) rest[++m]=f[i]
      # median of the rest (insertion sort: n is small)
      for (i=2;i<=m;i++) { v=rest[i]; j=i-1; while (j>0 && rest[j]>v) { rest[j+1]=rest[j]; j-- } rest[j+1]=v }
      med = m ? rest[int((m+1)/2)] : 0
      printf "jobs %d, failed %d; minor faults: first proof %d, median of the rest %d (%.1f%%), first three %d\n", n, err, f[1], med, f[1] ? 100*med/f[1] : 0, wave
      printf "peak RSS sampled while jobs ran: %.2f GiB\n", peak/1073741824
    }' "$out/$1.faults"
  # CPU ms per stage per proof: the first proof, and the median of the rest
  awk '{
      line=$0
      id=line; sub(/.*"id":"j/, "", id); sub(/".*/, "", id)
      while (match(line, /"stage":"[a-z0-9-]*"[^}]*"cpu_ms":[0-9.]+/)) {
        m=substr(line, RSTART, RLENGTH); line=substr(line, RSTART+RLENGTH)
        st=m; sub(/^"stage":"/, "", st); sub(/".*/, "", st)
        v=m; sub(/.*"cpu_ms":/, "", v)
        print st, id, v
      }
    }' "$f" | sort -k1,1 -k2,2n | awk '
    function flush() { if (cur == "") return
      for (i=2;i<=m;i++) { v=r[i]; j=i-1; while (j>0 && r[j]>v) { r[j+1]=r[j]; j-- } r[j+1]=v }
      printf " %s %.1f/%.1f", cur, first, m ? r[int((m+1)/2)] : 0; tot1+=first; totm+=(m ? r[int((m+1)/2)] : 0) }
    $1 != cur { flush(); cur=$1; m=0; first=0; delete r }
    { if ($2 == 1) first=$3; else r[++m]=$3 }
    BEGIN { printf "CPU ms per stage, first proof/median of the rest:" }
    END { flush(); printf " | sum %.1f/%.1f\n", tot1, totm }'
}

if [ "$mode" = setup ] || [ "$mode" = all ]; then
  [ -f "$dir/circuit.json" ] || "$bin" setup --builtin mulchain --constraints "$size" --dir "$dir"
  for i in $(seq 1 "$n"); do echo "{\"id\":\"j$i\",\"generate\":{\"seed\":$i}}"; done > "$out/jobs.jsonl"
fi
if [ "$mode" = unbounded ] || [ "$mode" = all ]; then
  run unbounded --mem-budget off
fi
if [ "$mode" = bounded ] || [ "$mode" = all ]; then
  start=$(grep -m1 'memory budget' "$out/unbounded.log")
  resident=$(bytes $(sed -E 's/.*resident at start ([0-9.]+) ([KMGT]?i?B).*/\1 \2/' <<<"$start"))
  foot=$(grep -o '"reserved_bytes":[0-9]*' "$out/unbounded.jsonl" | head -1 | cut -d: -f2)
  budget=$(awk -v r="$resident" -v f="$foot" 'BEGIN { printf "%.0f", r + 3.5*f }')
  echo "bounded budget: resident $resident + 3.5 × footprint $foot = $budget bytes" | tee "$out/budget.txt"
  run bounded --mem-budget "$budget"
fi
if [ "$mode" = summary ] || [ "$mode" = all ]; then
  { summary unbounded; summary bounded; cat "$out/budget.txt" 2>/dev/null || true; } | tee "$out/summary.txt"
fi
