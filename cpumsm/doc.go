// Package cpumsm is the CPU backend's multi-scalar multiplication: Σ sᵢ·Pᵢ
// over BN254's and BLS12-381's G1 and G2, with its scratch kept across
// calls.
//
// The algorithm is gnark-crypto v0.21.0's (ecc/<curve>/multiexp.go,
// multiexp_affine.go, multiexp_jacobian.go and the extended-Jacobian and
// batch-addition helpers of g1.go and g2.go; Copyright Consensys Software
// Inc., Apache-2.0), rewritten around slices instead of its fixed-size
// arrays so that the scratch can live in a free list:
//
//  1. the window c is gnark-crypto's (the c of 4…16 least in
//     (bits+1)(n+2^c)/c), and an MSM is halved, recursively, where its cost
//     model says the halves finish sooner on the tasks given (plan);
//  2. each scalar is cut into signed c-bit digits (a digit above 2^(c−1)
//     borrows from the next window), so a window needs 2^(c−1) buckets;
//  3. each window sums its points into buckets: in affine coordinates,
//     additions batched to share one field inversion (Montgomery's trick),
//     with a conflicting point queued for a later batch, or, for small c or
//     few filled buckets, in extended Jacobian coordinates (x = X/ZZ,
//     y = Y/ZZZ); a window of much more work than the others runs as two
//     halves;
//  4. each window's buckets reduce to Σ k·bucket[k−1] by running sums, and
//     the windows to the result by c doublings between additions.
//
// Results equal gnark-crypto's MultiExp (the tests check it on random,
// repeated and edge inputs). The difference is memory: gnark-crypto
// allocates each window's buckets, batch arrays and the digits on every
// call, garbage the Go runtime's scavenger returns to the OS between
// proofs and the next proof faults in again (notes/cpu-faults.md). Here a
// Scratch keeps them in bounded free lists: a steady stream of MSMs
// allocates nothing for them once warm.
package cpumsm
