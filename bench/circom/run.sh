#!/usr/bin/env bash
# zkpipe against rapidsnark and snarkjs on a 2^16-constraint circom circuit:
#
#   CIRCUIT=chain   chain.circom: 65533 squarings + 3 public rows = a 2^16
#                   domain, every wire significant (the default)
#   CIRCUIT=sha256  sha256.circom: circomlib's Sha256 of 512 bits, 62528
#                   constraints + 257 public rows; almost every wire a bit
#
#   bash bench/circom/run.sh prepare   # needs node + npm tools: compile, setup, witnesses
#   bash bench/circom/run.sh measure   # proofs/s of each prover on the same witnesses
#
# prepare writes into $WORK (default .cache/bench-circom for chain,
# .cache/bench-circom-CIRCUIT for the others; git-ignored): CIRCUIT.zkey
# (setup over $PTAU, default ../shared/fixtures/pot16_final.ptau),
# CIRCUIT_js/CIRCUIT.wasm, verification_key.json, w/wN.wtns (N = 0 …
# PROOFS−1), each from input_json N (deterministic, distinct witnesses).
# measure builds zkpipe (CGO_ENABLED=0) and bench/rapidsnark (cgo), proves
# every witness with each, in one run, and prints proofs/s and the ratios;
# snarkjs is timed on SNARKJS_PROOFS witnesses (default 2) when node is
# there, and one proof of each prover is checked with snarkjs groth16 verify.
# On a machine without node or Go (the GPU machine), run measure with
# prebuilt binaries: ZKPIPE_BIN=… RAPIDSNARK_BIN=… (see notes/circom.md).
# REPEAT=k proves each witness k times; ZKPIPE_DEVICES="cpu cuda" times
# zkpipe on each backend; ZKPIPE_FLAGS adds flags to zkpipe prove.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CIRCUIT=${CIRCUIT:-chain}
case $CIRCUIT in
chain) WORK=${WORK:-$ROOT/.cache/bench-circom}; ABOUT="chain.circom, 65533 constraints, 2^16 domain" ;;
sha256) WORK=${WORK:-$ROOT/.cache/bench-circom-sha256}; ABOUT="sha256.circom (circomlib Sha256(512)), 62528 constraints + 257 public, 2^16 domain" ;;
*) echo "CIRCUIT=$CIRCUIT: want chain or sha256" >&2; exit 2 ;;
esac
C=$CIRCUIT
PROOFS=${PROOFS:-8}
SNARKJS_PROOFS=${SNARKJS_PROOFS:-2}
PTAU=${PTAU:-$ROOT/../shared/fixtures/pot16_final.ptau}
mkdir -p "$WORK/w"
cd "$WORK"

now() { date +%s.%N; }

# input_json N: the inputs of witness N, one JSON object. chain: a = N+2,
# b = N+7. sha256: 512 bits, the SHA-256 digests of "zkpipe sha256 input N
# 0" and "… N 1" one after the other, most significant bit of each byte
# first (circomlib's order). Plain bash and coreutils: the GPU machine has
# no node.
input_json() {
	case $CIRCUIT in
	chain) echo "{\"a\":\"$(($1 + 2))\",\"b\":\"$(($1 + 7))\"}" ;;
	sha256)
		local hex="" bits="" k d
		for k in 0 1; do hex+=$(printf 'zkpipe sha256 input %d %d' "$1" $k | sha256sum | cut -c1-64); done
		for ((k = 0; k < ${#hex}; k++)); do
			d=$((16#${hex:k:1}))
			bits+="$((d >> 3 & 1)),$((d >> 2 & 1)),$((d >> 1 & 1)),$((d & 1)),"
		done
		echo "{\"in\":[${bits%,}]}"
		;;
	esac
}

# check_digest PUBLIC.json: for sha256, the proof's public outputs (256
# bits) must be coreutils' SHA-256 of witness 0's message: the circuit and
# the inputs' bit order checked outside circom.
check_digest() {
	[[ $CIRCUIT == sha256 ]] || return 0
	local hex="" want got k d
	for k in 0 1; do hex+=$(printf 'zkpipe sha256 input 0 %d' $k | sha256sum | cut -c1-64); done
	want=$(printf "$(echo "$hex" | sed 's/../\\x&/g')" | sha256sum | cut -c1-64)
	got=$(tr -cd '01,' < "$1" | tr -d ',')
	hex=""
	for ((k = 0; k < 256; k += 4)); do
		d=$((2#${got:k:4}))
		hex+=$(printf '%x' $d)
	done
	if [[ ${#got} != 256 || $hex != "$want" ]]; then
		echo "$1: public outputs $hex are not SHA-256 of witness 0's message ($want)"
		return 1
	fi
	echo "$1: public outputs = sha256sum of witness 0's message ($want)"
}

# circomlib_dir: the node_modules holding circomlib (sha256.circom includes
# it), installed beside circom2 by .ci/circom-tools.sh.
circomlib_dir() { (cd "$1/.." && pwd); }

tools() {
	if [[ -n "${ZKPIPE_NODE_BIN:-}" ]]; then echo "$ZKPIPE_NODE_BIN"; else bash "$ROOT/.ci/circom-tools.sh"; fi
}

prepare() {
	local bin; bin=$(tools)
	if [[ ! -f $C.zkey ]]; then
		"$bin/circom2" "$ROOT/bench/circom/$C.circom" --r1cs --wasm -l "$(circomlib_dir "$bin")" -o .
		"$bin/snarkjs" groth16 setup $C.r1cs "$PTAU" $C.zkey.tmp
		mv $C.zkey.tmp $C.zkey
	fi
	[[ -f verification_key.json ]] || "$bin/snarkjs" zkey export verificationkey $C.zkey verification_key.json
	for ((i = 0; i < PROOFS; i++)); do
		[[ -f w/w$i.wtns ]] && continue
		input_json $i > w/in$i.json
		"$bin/snarkjs" wtns calculate ${C}_js/$C.wasm w/in$i.json w/w$i.wtns
	done
}

# stream_rate RESULTS: proofs/s of a zkpipe stream from its result lines
# (stream start to the last stage's end); fails if any job failed.
stream_rate() {
	if grep -q '"error"' "$1"; then
		echo "zkpipe: failed jobs in $1:" >&2
		grep -o '"error":"[^"]*"' "$1" | head -3 >&2
		return 1
	fi
	local n end
	n=$(grep -c . "$1")
	end=$(grep -o '"ended_at_ms":[0-9.]*' "$1" | cut -d: -f2 | sort -g | tail -1)
	awk -v n="$n" -v e="$end" 'BEGIN { printf "%.4f\n", n / (e / 1000) }'
}

# first_proofs: one proof.json from each prover's output directory.
first_proofs() {
	for d in out-*; do
		ls $d/*.proof.json 2>/dev/null | head -1
	done
}

rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.4f\n", n / (b - a) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

measure() {
	local zk=${ZKPIPE_BIN:-} rs=${RAPIDSNARK_BIN:-}
	if [[ -z "$zk" ]]; then zk=$WORK/zkpipe; (cd "$ROOT" && CGO_ENABLED=0 go build -o "$zk" .); fi
	if [[ -z "$rs" ]]; then rs=$WORK/rapidsnark-bench; (cd "$ROOT/bench/rapidsnark" && go build -o "$rs" .); fi
	local repeat=${REPEAT:-1} wt=() n=0 inputs=()
	for ((i = 0; i < PROOFS; i++)); do inputs+=("$(input_json $i)"); done
	rm -rf out-*
	mkdir -p out-jobs out-rapidsnark out-snarkjs
	# PROOFS witnesses, each proved REPEAT times (distinct ids): a longer
	# stream without more witness files to carry.
	for ((r = 0; r < repeat; r++)); do
		for ((i = 0; i < PROOFS; i++)); do
			wt+=("w/w$i.wtns")
			echo "{\"id\":\"w$i-$r\",\"wtns\":\"w/w$i.wtns\"}" >> out-jobs/wtns.jsonl
			echo "{\"id\":\"w$i-$r\",\"input\":${inputs[i]}}" >> out-jobs/input.jsonl
			n=$((n + 1))
		done
	done
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "circuit: $ABOUT; $n proofs ($PROOFS witnesses × $repeat)"

	local summary=() t0 t1 zs=""
	for dev in ${ZKPIPE_DEVICES:-cpu}; do
		for kind in wtns input; do
			local d=out-zkpipe-$dev-$kind extra=()
			mkdir -p $d
			[[ $kind == input ]] && extra=(--wasm ${C}_js/$C.wasm)
			t0=$(now)
			if ! "$zk" prove --device "$dev" --zkey $C.zkey "${extra[@]}" --jobs out-jobs/$kind.jsonl --out $d \
				--results $d/results.jsonl ${ZKPIPE_FLAGS:-} 2> $d/stderr.log; then
				echo "zkpipe --device $dev, $kind jobs: failed:"
				tail -5 $d/stderr.log
				continue
			fi
			t1=$(now)
			local r
			r=$(stream_rate $d/results.jsonl) || continue
			echo "zkpipe --device $dev, $kind jobs: $r proofs/s on the stream ($(rate $n $t0 $t1) with the key load)"
			summary+=("zkpipe-$dev-$kind $r")
			[[ -z "$zs" ]] && zs=$r
		done
	done

	local rsj rr=""
	if rsj=$("$rs" -zkey $C.zkey -out out-rapidsnark "${wt[@]}"); then
		rr=$(echo "$rsj" | grep -o '"proofs_per_s":[0-9.e+-]*' | cut -d: -f2)
		echo "rapidsnark: $rr proofs/s, one proof a call ($rsj)"
	else
		echo "rapidsnark: failed"
	fi

	local sr="" bin=""
	if command -v node >/dev/null && bin=$(tools 2>/dev/null) && [[ -x "$bin/snarkjs" ]]; then
		t0=$(now)
		for ((i = 0; i < SNARKJS_PROOFS; i++)); do
			"$bin/snarkjs" groth16 prove $C.zkey w/w$i.wtns out-snarkjs/w$i-0.proof.json out-snarkjs/w$i-0.public.json
		done
		t1=$(now)
		sr=$(rate $SNARKJS_PROOFS $t0 $t1)
		echo "snarkjs groth16 prove: $sr proofs/s ($SNARKJS_PROOFS proofs, one process each)"
		for p in $(first_proofs); do
			echo "snarkjs groth16 verify $p: $("$bin/snarkjs" groth16 verify verification_key.json ${p%.proof.json}.public.json $p | tail -1)"
		done
	else
		echo "snarkjs: not timed (no node here)"
	fi
	for p in $(first_proofs); do
		"$zk" verify --vkey verification_key.json $p ${p%.proof.json}.public.json
		check_digest ${p%.proof.json}.public.json
	done
	for s in "${summary[@]+"${summary[@]}"}"; do
		set -- $s
		[[ -n "$rr" ]] && echo "ratio $1/rapidsnark: $(ratio $2 $rr)x"
		[[ -n "$sr" ]] && echo "ratio $1/snarkjs: $(ratio $2 $sr)x"
	done
}

case "${1:-}" in
prepare) prepare ;;
measure) measure ;;
*) echo "usage: $0 prepare|measure" >&2; exit 2 ;;
esac
