#!/usr/bin/env bash
# Times zkpipe's setup (keygen.Setup, issue 26 item 1) on the H200 machine
# (16 cores). Targets: 2^24 ≤ 60 s, 2^26 ≤ 4 min; gnark's groth16.Setup took
# 178 s at 2^22 and 9 min 20 s at 2^24 there.
# Usage (on that machine, with binaries built elsewhere):
#   go build -o zkpipe . && go test -c -o keygen.test ./keygen     (here)
#   bench/keygen-setup.sh ZKPIPE_BINARY KEYGEN_TEST_BINARY OUTDIR [LOG2 ...]
# For each size (default 20 22 24) and circuit (bits, mulchain): `zkpipe
# setup` under /usr/bin/time -v (wall time, peak RSS; it also prints its own
# time), the files in /tmp/zkks, removed after each (a 2^24 key is ~6 GB);
# then keygen.test's in-memory BenchmarkSetup (no files, no gnark) at the
# same sizes. CURVES=bn254,bls12-381 runs both curves (default bn254).
# Look for: "Elapsed (wall clock)" and "Maximum resident set size" in
# OUTDIR/setup-*.time; ns/op in OUTDIR/bench.txt.
set -euo pipefail
bin=$1 kt=$2 out=$3
shift 3
logs=("$@")
[ ${#logs[@]} -gt 0 ] || logs=(20 22 24)
mkdir -p "$out"
nproc | sed 's/^/cores: /' | tee "$out/bench.txt"
curves=${CURVES:-bn254}
for cv in ${curves//,/ }; do
  for lg in "${logs[@]}"; do
    for name in bits mulchain; do
      dir=/tmp/zkks/$cv-$name-$lg
      rm -rf "$dir"
      /usr/bin/time -v "$bin" setup --builtin "$name" --constraints $((1 << lg)) --curve "$cv" --dir "$dir" \
        >"$out/setup-$cv-$name-$lg.log" 2>"$out/setup-$cv-$name-$lg.time"
      cat "$out/setup-$cv-$name-$lg.log"
      grep -E "Elapsed|Maximum resident" "$out/setup-$cv-$name-$lg.time"
      rm -rf "$dir"
    done
  done
done
csv=$(IFS=,; echo "${logs[*]}")
"$kt" -test.run '^$' -test.bench Setup -test.benchtime 1x -test.timeout 2h \
  -keygen.logs "$csv" -keygen.circuits bits,mulchain -keygen.curves "$curves" -keygen.gnark=false | tee -a "$out/bench.txt"
