#!/usr/bin/env bash
# Installs the circom and snarkjs npm tools the circom source's tests use
# (source/circomsrc), into a cache directory outside the repository, and
# prints their bin directory; circomlib (for bench/circom/sha256.circom)
# lies beside them, in that directory's "..". Idempotent: a second run only
# prints the path.
#
#   export ZKPIPE_NODE_BIN="$(bash .ci/circom-tools.sh)"
#
# ZKPIPE_TOOLS_CACHE overrides the cache (default ~/.cache/zkpipe-circom-tools).
set -euo pipefail
CIRCOM2=0.2.23
SNARKJS=0.7.6
CIRCOMLIB=2.0.5 # bench/circom/sha256.circom includes its Sha256
dir="${ZKPIPE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zkpipe-circom-tools}/circom2-$CIRCOM2-snarkjs-$SNARKJS"
bin="$dir/node_modules/.bin"
if [[ ! -x "$bin/circom2" || ! -x "$bin/snarkjs" ]]; then
	command -v npm >/dev/null || { echo "circom-tools: npm not found (apt-get install -y nodejs npm)" >&2; exit 1; }
	mkdir -p "$dir"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
		"circom2@$CIRCOM2" "snarkjs@$SNARKJS" >&2
fi
if [[ ! -f "$dir/node_modules/circomlib/circuits/sha256/sha256.circom" ]]; then
	command -v npm >/dev/null || { echo "circom-tools: npm not found (apt-get install -y nodejs npm)" >&2; exit 1; }
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "circomlib@$CIRCOMLIB" >&2
fi
[[ -x "$bin/circom2" && -x "$bin/snarkjs" ]] || { echo "circom-tools: install left no circom2/snarkjs in $bin" >&2; exit 1; }
echo "$bin"
