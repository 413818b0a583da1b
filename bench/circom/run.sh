#!/usr/bin/env bash
# zkpipe against rapidsnark and snarkjs on a 2^16-constraint circom circuit
# (chain.circom: 65533 constraints + 3 public rows = a 2^16 domain).
#
#   bash bench/circom/run.sh prepare   # needs node + npm tools: compile, setup, witnesses
#   bash bench/circom/run.sh measure   # proofs/s of each prover on the same witnesses
#
# prepare writes into $WORK (default .cache/bench-circom, git-ignored):
# chain.zkey (setup over $PTAU, default ../shared/fixtures/pot16_final.ptau),
# chain_js/chain.wasm, verification_key.json, w/wN.wtns (N = 0 … PROOFS−1).
# measure builds zkpipe (CGO_ENABLED=0) and bench/rapidsnark (cgo), proves
# every witness with each, in one run, and prints proofs/s and the ratios;
# snarkjs is timed on SNARKJS_PROOFS witnesses (default 2) when node is
# there, and one proof of each prover is checked with snarkjs groth16 verify.
# On a machine without node or Go (the GPU machine), run measure with
# prebuilt binaries: ZKPIPE_BIN=… RAPIDSNARK_BIN=… (see notes/circom.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-$ROOT/.cache/bench-circom}
PROOFS=${PROOFS:-8}
SNARKJS_PROOFS=${SNARKJS_PROOFS:-2}
PTAU=${PTAU:-$ROOT/../shared/fixtures/pot16_final.ptau}
mkdir -p "$WORK/w"
cd "$WORK"

now() { date +%s.%N; }
rate() { python3 -c "import sys; n,a,b=map(float,sys.argv[1:]); print(f'{n/(b-a):.4f}')" "$@"; }

tools() {
	if [[ -n "${ZKPIPE_NODE_BIN:-}" ]]; then echo "$ZKPIPE_NODE_BIN"; else bash "$ROOT/.ci/circom-tools.sh"; fi
}

prepare() {
	local bin; bin=$(tools)
	if [[ ! -f chain.zkey ]]; then
		"$bin/circom2" "$ROOT/bench/circom/chain.circom" --r1cs --wasm -o .
		"$bin/snarkjs" groth16 setup chain.r1cs "$PTAU" chain.zkey.tmp
		mv chain.zkey.tmp chain.zkey
	fi
	[[ -f verification_key.json ]] || "$bin/snarkjs" zkey export verificationkey chain.zkey verification_key.json
	for ((i = 0; i < PROOFS; i++)); do
		[[ -f w/w$i.wtns ]] && continue
		echo "{\"a\":\"$((i + 2))\",\"b\":\"$((i + 7))\"}" > w/in$i.json
		"$bin/snarkjs" wtns calculate chain_js/chain.wasm w/in$i.json w/w$i.wtns
	done
}

measure() {
	local zk=${ZKPIPE_BIN:-} rs=${RAPIDSNARK_BIN:-}
	if [[ -z "$zk" ]]; then zk=$WORK/zkpipe; (cd "$ROOT" && CGO_ENABLED=0 go build -o "$zk" .); fi
	if [[ -z "$rs" ]]; then rs=$WORK/rapidsnark-bench; (cd "$ROOT/bench/rapidsnark" && go build -o "$rs" .); fi
	local wt=() jobs=out-zkpipe/jobs.jsonl ijobs=out-zkpipe-in/jobs.jsonl
	rm -rf out-zkpipe out-zkpipe-in out-rapidsnark out-snarkjs
	mkdir -p out-zkpipe out-zkpipe-in out-rapidsnark out-snarkjs
	for ((i = 0; i < PROOFS; i++)); do
		wt+=("w/w$i.wtns")
		echo "{\"id\":\"w$i\",\"wtns\":\"w/w$i.wtns\"}" >> $jobs
		echo "{\"id\":\"w$i\",\"input\":{\"a\":\"$((i + 2))\",\"b\":\"$((i + 7))\"}}" >> $ijobs
	done
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
	echo "circuit: chain.circom, 2^16 domain, $PROOFS proofs"

	# zkpipe: wall time of the whole command, key load included, and the
	# stream alone (t0 = stream start, from the result lines).
	local t0 t1
	t0=$(now)
	"$zk" prove --zkey chain.zkey --jobs $jobs --out out-zkpipe --results out-zkpipe/results.jsonl ${ZKPIPE_FLAGS:-}
	t1=$(now)
	local zs; zs=$(python3 - out-zkpipe/results.jsonl <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r["id"] for r in rs if r.get("error")]
if bad: sys.exit("zkpipe failed: %s" % bad)
end = max(s["ended_at_ms"] for r in rs for s in r["stages"]) / 1000
print(f"{len(rs)/end:.4f}")
PY
)
	echo "zkpipe (wtns jobs): $zs proofs/s on the stream; $(rate $PROOFS $t0 $t1) proofs/s with the key load ($(python3 -c "print(f'{$t1-$t0:.1f}')") s)"

	local zi=""
	if [[ -f chain_js/chain.wasm ]]; then
		"$zk" prove --zkey chain.zkey --wasm chain_js/chain.wasm --jobs $ijobs --out out-zkpipe-in --results out-zkpipe-in/results.jsonl ${ZKPIPE_FLAGS:-}
		zi=$(python3 - out-zkpipe-in/results.jsonl <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r["id"] for r in rs if r.get("error")]
if bad: sys.exit("zkpipe failed: %s" % bad)
end = max(s["ended_at_ms"] for r in rs for s in r["stages"]) / 1000
print(f"{len(rs)/end:.4f}")
PY
)
		echo "zkpipe (input jobs, witness by wasm in the stream): $zi proofs/s"
	fi

	local rsj; rsj=$("$rs" -zkey chain.zkey -out out-rapidsnark "${wt[@]}")
	local rr; rr=$(python3 -c "import json,sys; print(f\"{json.loads(sys.argv[1])['proofs_per_s']:.4f}\")" "$rsj")
	echo "rapidsnark: $rr proofs/s ($rsj)"

	local sr=""
	local bin; bin=$(tools 2>/dev/null) || bin=""
	if [[ -n "$bin" && -x "$bin/snarkjs" ]] && command -v node >/dev/null; then
		t0=$(now)
		for ((i = 0; i < SNARKJS_PROOFS; i++)); do
			"$bin/snarkjs" groth16 prove chain.zkey w/w$i.wtns out-snarkjs/w$i.proof.json out-snarkjs/w$i.public.json
		done
		t1=$(now)
		sr=$(rate $SNARKJS_PROOFS $t0 $t1)
		echo "snarkjs groth16 prove: $sr proofs/s ($SNARKJS_PROOFS proofs, one process each)"
		for d in out-zkpipe out-zkpipe-in out-rapidsnark out-snarkjs; do
			[[ -f $d/w0.proof.json ]] || continue
			echo -n "snarkjs groth16 verify $d/w0: "
			"$bin/snarkjs" groth16 verify verification_key.json $d/w0.public.json $d/w0.proof.json | tail -1
		done
	else
		echo "snarkjs: not timed (no node here)"
	fi
	"$zk" verify-circom --vkey verification_key.json out-zkpipe/w0.proof.json out-zkpipe/w0.public.json out-rapidsnark/w0.proof.json out-rapidsnark/w0.public.json
	python3 -c "
import sys
z, zi, r, s = (float(x) if x else None for x in sys.argv[1:])
print(f'ratio zkpipe/rapidsnark: {z/r:.2f}x' + (f'  (input jobs: {zi/r:.2f}x)' if zi else ''))
if s: print(f'ratio zkpipe/snarkjs:    {z/s:.2f}x' + (f'  (input jobs: {zi/s:.2f}x)' if zi else ''))
" "$zs" "$zi" "$rr" "$sr"
}

case "${1:-}" in
prepare) prepare ;;
measure) measure ;;
*) echo "usage: $0 prepare|measure" >&2; exit 2 ;;
esac
