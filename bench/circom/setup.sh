#!/usr/bin/env bash
# A circom user's setup, timed in one run (issue 48 row 1): circom's r1cs
# of bench/circom/merkle.circom (a Poseidon Merkle proof, LEVELS deep,
# default 46: about 24k constraints, a 2^15 domain), then
#
#   zkpipe setup --r1cs --zkey            a test key (fresh toxic waste)
#   zkpipe setup --r1cs --zkey --ptau     snarkjs groth16 setup's phase 2
#   snarkjs groth16 setup                 the same, by snarkjs (SNARKJS=0 skips it)
#
# over $PTAU (default ../shared/fixtures/pot16_final.ptau, prepared), each
# under /usr/bin/time (wall, CPU, peak RSS); the two phase 2 keys are
# compared byte for byte; then zkpipe groth16 fullprove with the test key
# and snarkjs groth16 verify of its proof, and snarkjs zkey export
# verificationkey and solidityverifier of it. Needs node and the tools of
# .ci/circom-tools.sh ($ZKPIPE_NODE_BIN), and Go to build zkpipe. Writes
# into $WORK (default .cache/bench-circom-setup); the summary is the last
# lines printed.
#
#   bash bench/circom/setup.sh                  # LEVELS=46
#   LEVELS=100 SNARKJS=0 bash bench/circom/setup.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LEVELS=${LEVELS:-46}
SNARKJS=${SNARKJS:-1}
PTAU=${PTAU:-$ROOT/../shared/fixtures/pot16_final.ptau}
WORK=${WORK:-$ROOT/.cache/bench-circom-setup}
bin=${ZKPIPE_NODE_BIN:-$(bash "$ROOT/.ci/circom-tools.sh")}
mkdir -p "$WORK"
cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/zkpipe" .
cd "$WORK"

# timed NAME CMD…: runs CMD under /usr/bin/time, its output in NAME.log,
# and appends "NAME: wall, cpu, peak RSS" to summary.txt
timed() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$name.time" "$@" >"$name.log" 2>&1 || { cat "$name.log" >&2; echo "failed: $*" >&2; exit 1; }
	read -r wall user sys rss <"$name.time"
	printf '%-22s %8.2f s wall %8.2f s cpu %7d MB peak RSS\n' "$name" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)) | tee -a summary.txt
}

: >summary.txt
echo "$(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a summary.txt
sed "s/MerkleProof(LEVELS)/MerkleProof($LEVELS)/" "$ROOT/bench/circom/merkle.circom" >merkle.circom
# circom2 (wasm) reads includes under its working directory's paths
(cd "$bin/../.." && "$bin/circom2" "$WORK/merkle.circom" --r1cs --wasm -l node_modules -o "$WORK") >circom.log 2>&1 || { cat circom.log; exit 1; }
echo "merkle.circom, LEVELS=$LEVELS: $(grep -E 'non-linear|linear' circom.log | tr -s ' ' | paste -sd' ')" | tee -a summary.txt

timed "zkpipe setup" ./zkpipe setup --device cpu -v --r1cs merkle.r1cs --zkey test.zkey
grep 'a test key' "zkpipe setup.log" | tee -a summary.txt
timed "zkpipe setup --ptau" ./zkpipe setup --device cpu -v --r1cs merkle.r1cs --zkey ptau.zkey --ptau "$PTAU"
if [ "$SNARKJS" = 1 ]; then
	timed "snarkjs groth16 setup" "$bin/snarkjs" groth16 setup merkle.r1cs "$PTAU" snarkjs.zkey
	if cmp -s ptau.zkey snarkjs.zkey; then echo "zkpipe's --ptau zkey is snarkjs's byte for byte" | tee -a summary.txt; else echo "zkpipe's --ptau zkey DIFFERS from snarkjs's" | tee -a summary.txt; exit 1; fi
fi
input() { # the leaf 1, path elements 2…, indices alternating
	local e="" i="" k
	for ((k = 0; k < LEVELS; k++)); do e+="\"$((k + 2))\","; i+="\"$((k % 2))\","; done
	echo "{\"leaf\":\"1\",\"pathElements\":[${e%,}],\"pathIndices\":[${i%,}]}"
}
input >input.json
timed "zkpipe fullprove" ./zkpipe groth16 fullprove --device cpu input.json merkle_js/merkle.wasm test.zkey proof.json public.json
"$bin/snarkjs" zkey export verificationkey test.zkey vkey.json >/dev/null
"$bin/snarkjs" groth16 verify vkey.json public.json proof.json | tee verify.log | tail -1
grep -q 'OK!' verify.log && echo "snarkjs groth16 verify: OK (zkpipe's proof, zkpipe's test key)" | tee -a summary.txt
"$bin/snarkjs" zkey export solidityverifier test.zkey Verifier.sol >/dev/null && echo "snarkjs zkey export solidityverifier: $(wc -c <Verifier.sol) bytes" | tee -a summary.txt
echo
cat summary.txt
