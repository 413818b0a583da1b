#!/usr/bin/env bash
# Benchmarks zkpipe against gnark's groth16.Prove on the H200 machine (16 cores).
# Usage (on that machine, with a zkpipe binary built elsewhere):
#   bench/gnark-vs-zkpipe.sh ZKPIPE_BINARY OUTDIR [PROOFS] [CIRCUIT:CONSTRAINTS ...]
# Sets up each circuit once in /tmp/zkc, then runs `zkpipe bench` with a few
# stage shapes, writing logs and result lines to OUTDIR.
set -euo pipefail
bin=$1 out=$2 n=${3:-8}
shift 3 || shift $#
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(mulchain:1048576 bits:1040000)
mkdir -p "$out" /tmp/zkc
nproc | sed 's/^/cores: /'
for spec in "${specs[@]}"; do
  name=${spec%%:*} size=${spec##*:}
  dir=/tmp/zkc/$name-$size
  [ -f "$dir/circuit.json" ] || /usr/bin/time -v "$bin" setup --builtin "$name" --constraints "$size" --dir "$dir" 2>"$out/setup-$name.time"
  # shape A: one worker per stage, all cores per MSM/NTT
  "$bin" bench --circuit "$dir" -n "$n" --results "$out/$name-a.jsonl" \
    --synthesize-workers 2 --parse-queue 4 2>&1 | tee "$out/$name-a.log"
  # shape B: two workers on the heavy stages, half the cores each
  "$bin" bench --circuit "$dir" -n "$n" --skip-gnark --results "$out/$name-b.jsonl" \
    --synthesize-workers 2 --msm-h-workers 2 --tail-msm-workers 2 --b-g2-workers 2 \
    --msm-tasks 8 --fft-tasks 8 2>&1 | tee "$out/$name-b.log"
done
