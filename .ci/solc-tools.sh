#!/usr/bin/env bash
# Installs solcjs (the npm package solc: the Solidity compiler built to
# wasm, no native binary, no download at compile time) that the EVM tests
# (package evm/soltest) compile verifier contracts with, into a cache
# directory outside the repository, and prints the path of its solcjs
# executable. Idempotent: a second run only prints the path.
#
#   export ZKPIPE_SOLCJS="$(bash .ci/solc-tools.sh)"
#
# ZKPIPE_TOOLS_CACHE overrides the cache (default ~/.cache/zkpipe-circom-tools,
# shared with .ci/circom-tools.sh).
set -euo pipefail
SOLC=0.8.28 # gnark's and snarkjs's verifiers want ^0.8.0; 0.8.28 targets cancun by default
dir="${ZKPIPE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zkpipe-circom-tools}/solc-$SOLC"
bin="$dir/node_modules/.bin/solcjs"
if [[ ! -x "$bin" ]]; then
	command -v npm >/dev/null || { echo "solc-tools: npm not found (apt-get install -y nodejs npm)" >&2; exit 1; }
	mkdir -p "$dir"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "solc@$SOLC" >&2
fi
[[ -x "$bin" ]] || { echo "solc-tools: install left no solcjs at $bin" >&2; exit 1; }
echo "$bin"
