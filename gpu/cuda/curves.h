/* curves.h — the curves the library proves on, listed once. zkpipe.h's
 * curve ids and zk_abi's size table, entries.cuh's dispatch by curve and
 * its kernels' halves, zkpipe.cu's per-curve setup and build.sh's parts all
 * follow from this list; nothing else names the curves one by one. (The Go
 * side's list is internal/generator's curves, in the same order.)
 *
 * ZK_CURVES(X, a) calls X(a, ID, name, label, C, g1, g2, g2tab, red, seg)
 * for each curve, in id order:
 *   ID     its id is ZK_CURVE_<ID>, its place in the list from 0
 *   name   its C++ names' part: the halves precompute_<name>_g1, …
 *   label  how a message names it
 *   C      its traits (curve.cuh: C::Fp, C::Fp2, C::Fr, the coefficients),
 *          over its fields' constants (field.cuh)
 *   g1, g2, g2tab  the build's parts (zkpipe.cu's ZK_PART, build.sh) that
 *          compile its G1 kernels, its G2 MSM, and its G2 tables and ones
 *   red, seg  where not 0, the parts that compile its G2 MSM's reduction
 *          kernels (levelN, reduce, bitsum, weigh) and its segment kernel,
 *          split out of g2's (BLS12-381's: the longest to compile)
 * Part 1 is the device and the NTTs; every part is at most ZK_PARTS_MAX.
 *
 * The seam's limit: a curve whose scalar field Fr is four 64-bit words (the
 * NTTs, the MSMs' digits and the Go side's proofdata.Scalar take 256-bit
 * scalars); its base field may be any Field<Params> (BN254 4 words,
 * BLS12-381 6).
 */
#ifndef ZKPIPE_CURVES_H
#define ZKPIPE_CURVES_H

#define ZK_CURVES(X, a)                                                                                                \
    X(a, BN254, bn254, "BN254", Bn254, 2, 3, 4, 0, 0)                                                                  \
    X(a, BLS12_381, bls12381, "BLS12-381", Bls12381, 5, 6, 7, 8, 9)

#define ZK_PARTS_MAX 16

/* ZK_IN_PART(part, …): … where this translation unit builds part (the
 * library defines ZK_PART_0 … ZK_PART_16; part 0 is none). */
#define ZK_IN_PART(part, ...) ZK_PART_##part(__VA_ARGS__)

/* ZK_CURVE_PARTS_: an entry's parts, for build.sh's list (ZK_BUILD_PARTS,
 * the 0s dropped there). */
#define ZK_CURVE_PARTS_(a, ID, name, label, C, g1, g2, g2tab, red, seg) g1 g2 g2tab red seg
#define ZK_BUILD_PARTS 1 ZK_CURVES(ZK_CURVE_PARTS_, ~)

#endif
