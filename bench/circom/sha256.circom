pragma circom 2.0.0;

// SHA-256 of 512 private input bits (two compression blocks with the
// padding) from circomlib 2.0.5, its 256 output bits public: 62 528
// constraints + 257 public rows, a 2^16 domain. Almost every wire is a bit:
// the boolean-heavy circom benchmark beside chain.circom.
include "circomlib/circuits/sha256/sha256.circom";

component main = Sha256(512);
