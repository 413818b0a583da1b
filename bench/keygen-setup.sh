#!/usr/bin/env bash
# Times zkpipe's setup (compile + keygen.Setup + files, issue 26 item 1) on
# the H200 machine (16 cores). Targets: 2^24 ≤ 60 s, 2^26 ≤ 4 min; gnark's
# groth16.Setup took 178 s at 2^22 and 9 min 20 s at 2^24 there.
# Usage (on that machine, with binaries built elsewhere):
#   go build -o zkpipe . && go test -c -o keygen.test ./keygen     (here)
#   bench/keygen-setup.sh ZKPIPE_BINARY KEYGEN_TEST_BINARY OUTDIR [SPEC ...]
# A SPEC is LOG2 (bits and mulchain at --constraints 2^LOG2; note bits at
# 2^k has a little more than 2^k constraints, so a domain of 2^(k+1)) or
# NAME:CONSTRAINTS (one built-in at that --constraints). Default: 20 22.
# For each: `zkpipe setup -v` under /usr/bin/time -v (wall time, peak RSS,
# and setup's own phase lines: wall and CPU time of the compile, each of
# keygen's phases, each file), the files in /tmp/zkks, removed after each
# (a 2^24 key is ~6 GB). CURVES=bn254,bls12-381 runs both curves (default
# bn254). PROCS="4 16" repeats each at those GOMAXPROCS (default: all
# cores only): a phase whose wall time does not fall with more cores is
# serial. BENCH=1 also runs keygen.test's in-memory BenchmarkSetup (no
# files, no compile timed, no gnark) and BenchmarkWriteRawProvingKey at
# the LOG2 sizes. DEVICES="cpu cuda" runs each setup with each --device
# (default: cpu; cuda puts the fixed-base products on the GPU, zk_fixed_base,
# with CUDA_LIB=path/libzkpipe_cuda.so as --cuda-lib when set): the phases
# "G1 A", "G1 B", "G1 Z", "G1 K", "G2 B" are the products, and "open GPU 0"
# the device's start-up.
#
# The lead's run at 2^24 (bits with 15,728,640 constraints keeps the domain
# at 2^24; ~6 GB of keys under /tmp, ~1.5 min):
#   bench/keygen-setup.sh ./zkpipe ./keygen.test /tmp/ks24 bits:15728640 mulchain:16777216
# Look for, in OUTDIR/summary.txt: the "in Xs" of setup's line (the whole
# command: compile, keys, files), "Maximum resident set size" (the model in
# circuits/setupsize.go should be 1–1.6× it: for bits 15.7M it says 22.6 GB; expect ~15 GB),
# and the phase lines: "compile" is the built-ins' direct R1CS build
# (circuits/direct.go, one core: expect ~1 s mulchain, ~2.5 s bits at
# 2^24; gnark's frontend took 38 s and 62 s); "G1 Z", "G1 K", "G1 A", "G2 B" should show cpu ≈ 16× wall; "write
# circuit.pk" is the disk (5 GB and an fsync).
set -euo pipefail
bin=$1 kt=$2 out=$3
shift 3
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(20 22)
mkdir -p "$out"
sum=$out/summary.txt
nproc | sed 's/^/cores: /' | tee "$sum"
curves=${CURVES:-bn254}
procs=${PROCS:-$(nproc)}
logs=()
for cv in ${curves//,/ }; do
  for spec in "${specs[@]}"; do
    if [[ $spec == *:* ]]; then
      runs=("$spec")
    else
      logs+=("$spec")
      runs=("bits:$((1 << spec))" "mulchain:$((1 << spec))")
    fi
    for run in "${runs[@]}"; do
      name=${run%%:*} c=${run#*:}
      for p in $procs; do
      for dev in ${DEVICES:-cpu}; do
        tag=$cv-$name-$c-p$p-$dev
        dir=/tmp/zkks/$tag
        rm -rf "$dir"
        devflags=(--device "$dev")
        [ -n "${CUDA_LIB:-}" ] && devflags+=(--cuda-lib "$CUDA_LIB")
        GOMAXPROCS=$p /usr/bin/time -v "$bin" setup -v --builtin "$name" --constraints "$c" --curve "$cv" --dir "$dir" "${devflags[@]}" \
          >"$out/setup-$tag.log" 2>"$out/setup-$tag.time" || echo "FAILED: $tag" | tee -a "$sum"
        {
          echo "== $cv $name --constraints $c GOMAXPROCS=$p --device $dev"
          cat "$out/setup-$tag.log"
          grep -E "^zkpipe setup: .* wall" "$out/setup-$tag.time" || true
          grep -E "Elapsed|Maximum resident" "$out/setup-$tag.time"
        } | tee -a "$sum"
        rm -rf "$dir"
      done
      done
    done
  done
done
if [ "${BENCH:-0}" = 1 ] && [ ${#logs[@]} -gt 0 ]; then
  csv=$(IFS=,; echo "${logs[*]}")
  "$kt" -test.run '^$' -test.bench 'Setup|WriteRawProvingKey' -test.benchtime 1x -test.timeout 2h \
    -keygen.logs "$csv" -keygen.circuits bits,mulchain -keygen.curves "$curves" -keygen.gnark=false | tee -a "$sum"
fi
