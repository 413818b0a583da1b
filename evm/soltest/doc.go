// Package soltest runs zkpipe's proofs through real verifier contracts:
// each contract compiled by solc (solcjs, the npm package, from
// .ci/solc-tools.sh) and executed in go-ethereum's EVM (core/vm/runtime).
// It holds only tests, in a package of its own so that only it pays
// go-ethereum's compile time.
package soltest
