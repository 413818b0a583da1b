#!/usr/bin/env bash
# Regenerates the small BLS12-381 circom circuits and snarkjs Groth16 keys
# the tests use, committed in source/circomsrc/testdata/bls12381, as
# scripts/make-circom-testdata.sh does BN254's: for each NAME.circom there,
# NAME.r1cs and NAME.wasm (circom2 --prime bls12381), NAME.zkey (snarkjs
# groth16 setup over a fresh 2^8 bls12381 powers of tau, then one
# contribution, so δ is not the generator) and NAME.vkey.json; for blsmul,
# also a witness and a snarkjs proof of blsmul.input.json (blsmul.wtns,
# blsmul.proof.json, blsmul.public.json). It ends by rewriting
# circuits.sha256, which TestCommittedBLSCircuitsMatchTheirSources checks.
#
#   scripts/make-circom-testdata-bls12381.sh            # every circuit
#   scripts/make-circom-testdata-bls12381.sh blsmul     # only these
#
# The tools are .ci/circom-tools.sh's ($ZKPIPE_NODE_BIN if set). snarkjs
# mixes fresh randomness into every contribution, so a run makes new keys:
# commit them only when a circuit changed.
set -euo pipefail
cd "$(dirname "$0")/.."
td=source/circomsrc/testdata/bls12381
bin=${ZKPIPE_NODE_BIN:-$(bash .ci/circom-tools.sh)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

quiet() { # runs a tool, showing its output only when it fails
	local out
	out=$("$@" 2>&1) || { echo "$out" >&2; echo "failed: $*" >&2; exit 1; }
}

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in "$td"/*.circom; do names+=("$(basename "$f" .circom)"); done
fi

echo "bls12381 powers of tau 2^8"
quiet "$bin/snarkjs" powersoftau new bls12381 8 "$work/p0.ptau"
quiet "$bin/snarkjs" powersoftau contribute "$work/p0.ptau" "$work/p1.ptau" --name="zkpipe testdata" -e="zkpipe testdata bls tau"
quiet "$bin/snarkjs" powersoftau prepare phase2 "$work/p1.ptau" "$work/final.ptau"

for n in "${names[@]}"; do
	[ -f "$td/$n.circom" ] && [ -f "$td/$n.input.json" ] || { echo "$td/$n.circom or $n.input.json missing" >&2; exit 1; }
	echo "$n"
	cp "$td/$n.circom" "$work/"
	(cd "$work" && quiet "$bin/circom2" "$n.circom" --prime bls12381 --r1cs --wasm -o .)
	quiet "$bin/snarkjs" groth16 setup "$work/$n.r1cs" "$work/final.ptau" "$work/$n.0.zkey"
	quiet "$bin/snarkjs" zkey contribute "$work/$n.0.zkey" "$work/$n.zkey" --name="zkpipe testdata" -e="zkpipe testdata $n"
	quiet "$bin/snarkjs" zkey export verificationkey "$work/$n.zkey" "$work/$n.vkey.json"
	cp "$work/$n.r1cs" "$work/${n}_js/$n.wasm" "$work/$n.zkey" "$work/$n.vkey.json" "$td/"
	if [ "$n" = blsmul ]; then
		quiet "$bin/snarkjs" wtns calculate "$td/blsmul.wasm" "$td/blsmul.input.json" "$td/blsmul.wtns"
		quiet "$bin/snarkjs" groth16 prove "$td/blsmul.zkey" "$td/blsmul.wtns" "$td/blsmul.proof.json" "$td/blsmul.public.json"
		quiet "$bin/snarkjs" groth16 verify "$td/blsmul.vkey.json" "$td/blsmul.public.json" "$td/blsmul.proof.json"
	fi
done

(cd "$td" && sha256sum -- *.circom *.input.json *.r1cs *.wasm *.zkey *.vkey.json blsmul.wtns blsmul.proof.json blsmul.public.json >circuits.sha256)
du -ch "$td"/*.r1cs "$td"/*.wasm "$td"/*.zkey "$td"/*.vkey.json | tail -1
