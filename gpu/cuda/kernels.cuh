// kernels.cuh — the kernels of libzkpipe_cuda.so: each wraps a per-thread
// body of msm.cuh or ntt.cuh in its grid, or stages data in shared memory
// (the NTT passes, the reductions). zkpipe.cu launches them on the GPU; the
// host stand-in (hostlib.cpp) runs these same kernels on the CPU, each CUDA
// thread a fiber (cuda_host.h), so CI runs them too.
//
// Included inside an unnamed namespace, after zk.cuh, by zkpipe.cu (nvcc)
// and hostlib.cpp (g++ with cuda_host.h).
#pragma once

// ZK_DYN_SHARED declares the launch's dynamic shared memory as an array of
// T. One untyped extern array viewed as T: an `extern __shared__ T name[]`
// per T is a redeclaration nvcc refuses once a kernel template is
// instantiated for two types (the NTT over BN254's and BLS12-381's Fr).
#ifndef ZK_DYN_SHARED
#define ZK_DYN_SHARED(T, name)                                    \
    extern __shared__ __align__(16) unsigned char zk_dyn_smem_[]; \
    T *name = reinterpret_cast<T *>(zk_dyn_smem_)
#endif

const int TPB = 256;
inline unsigned blocks(size_t n, int tpb = TPB) { return (unsigned)((n + tpb - 1) / tpb); }

template <class S>
__global__ void k_digits(const S *scalars, const u32 *idx, size_t n, int c, int nw, u32 key0, u32 sentinel,
                         u32 *keys, u32 *vals) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) digits_body(i, scalars, idx, n, c, nw, key0, sentinel, keys, vals);
}

template <class S>
__global__ void k_digits_table(const S *scalars, const u32 *idx, size_t n, size_t nbase, int c, int nw, u32 key0,
                               u32 sentinel, u32 *keys, u32 *vals) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) digits_table_body(i, scalars, idx, n, nbase, c, nw, key0, sentinel, keys, vals);
}
template <class F>
__global__ void k_precompute(const Affine<F> *bases, size_t nbase, int c, int nw, Affine<F> *table) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nbase) precompute_body(i, bases, nbase, c, nw, table);
}
__global__ void k_runs(const u32 *keys, size_t m, u32 nb, u32 *start, u32 *cnt) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) runs_body(b, keys, m, start, cnt);
}

__global__ void k_tiles(const u32 *start, const u32 *cnt, u32 nb, u32 L, u32 *chunks) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) tiles_body(b, start, cnt, L, chunks);
}

__global__ void k_chunks(const u32 *cnt, u32 nb, u32 L, u32 *chunks) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) chunks_body(b, cnt, L, chunks);
}

// Level0MinBlocks: k_level0's blocks an SM, its register cap
// 65536/(block·k) for Level0Block's block. Two over BN254's Fp (see below);
// one over wider fields, which lets BLS12-381's G1 body take up to 255
// registers and one block of 256 threads an SM (it takes 190). At 190 a
// warp holds 6,144 registers, and an SM's four schedulers each have a
// quarter of the 65,536: two warps each, 8 an SM, whatever the block
// (blocks of 64 were no faster, notes/h100-2026-12-06b.md).
// Three warps a scheduler need at most 168 registers: BLS12-381's G1 takes
// blocks of 128, three an SM, and
// its body fits in 164 with no spills (CUDA 13 and 11.8). H100, notes/
// h100-2026-12-06c call 5, A B A B against 256 × 1 (190 registers): G1
// 2^20 8.7 and 8.7 ms against 9.0 and 8.9, 2^22 26.9 and 26.8 against 27.3
// and 27.7, 2^24 96.4 and 96.5 against 98.6 and 98.6. Two blocks of 256
// cap it at 128 registers: 232 bytes of spills, and no faster
// (notes/h100-2026-12-06.md call 6: 2^20 8.7 ms against 8.8, 2^22 26.9 both;
// with the prefetching body, 388 bytes, 8.9 and 27.4). BLS12-381's G2 keeps
// 256 × 1 (255 registers, 572 bytes of spills): at 128 × 3 it spills 1,468
// bytes and its MSM 2^20 takes 37.1 ms against 27.5 (call 5). The build
// options that set these (ZK_BLS_G1_MINB, ZK_BLS_G1_LEVEL0_BLOCK,
// ZK_BLS_G2_LEVEL0_MINB, ZK_BLS_G2_LEVEL0_BLOCK) are retired:
// notes/cuda-variants.md.
template <class F> struct Level0MinBlocks {
    static constexpr int value = sizeof(F) == 32 ? 2 : 1;
};
template <> struct Level0MinBlocks<Bls12381Fp> {
    static constexpr int value = 3;
};

// Level0Block: k_level0's threads a block (zkpipe.cu's launch, and the
// kernel's launch bound). At most TPB.
template <class F> struct Level0Block {
    static constexpr int value = TPB;
};
template <> struct Level0Block<Bls12381Fp> {
    static constexpr int value = 128;
};

// Two blocks an SM over Fp: the prefetching body would take 136 registers
// a thread, one block of 256 threads an SM.
template <class F, bool PF>
__global__ void __launch_bounds__(Level0Block<F>::value, Level0MinBlocks<F>::value) k_level0(const Affine<F> *bases, const u32 *idx, const u32 *keys, const u32 *vals, size_t m, u32 nb,
                         const u32 *start, const u32 *off, u32 L, u32 tiles, XYZZ<F> *out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < tiles) level0_body<F, PF>(t, bases, idx, keys, vals, m, nb, start, off, L, out);
}

// The MSM's point kernels (k_levelN, k_segment, k_reduce, k_bitsum,
// k_weigh) carry no launch bounds: ptxas may give them all 255 registers
// (BLS12-381's G2 k_segment still spills 8.6 KB, lab:notes/h200-2026-12-03b/
// build.log). Caps that trade spills for occupancy lost (ZK_BLS_G2_MINB,
// retired with its figures: notes/cuda-variants.md).
const int SEGMENT_TPB = 128; // k_segment's block (zkpipe.cu launches it with 128)

template <class F>
__global__ void k_levelN(const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks,
                         u32 nb, u32 L, u32 total, XYZZ<F> *out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) levelN_body(t, in, start, cnt, off, chunks, nb, L, out);
}

template <class F>
__global__ void k_segment(const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, u32 nseg,
                          XYZZ<F> *acc, XYZZ<F> *run) {
    u32 s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < nseg) segment_body(s, P, start, cnt, half, S, acc, run);
}

template <class F> __global__ void k_ones(const Affine<F> *bases, const u64 *bitmap, size_t n, size_t nw, XYZZ<F> *out) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nw) ones_body(t, bases, bitmap, n, out);
}

// The fixed-base products (fixed.cuh): the powers of the base (one
// thread: nw·c doublings), the table (a thread an entry), the products (a
// thread a scalar) and their affine form (a thread FB_INV_BATCH points).
template <class F> __global__ void k_fb_powers(const Affine<F> *base, int c, int nw, XYZZ<F> *pw) {
    if (blockIdx.x == 0 && threadIdx.x == 0) fb_powers_body(base, c, nw, pw);
}
template <class F> __global__ void k_fb_table(const XYZZ<F> *pw, int c, size_t entries, Affine<F> *table) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < entries) fb_table_body(i, pw, c, table);
}
template <class F>
__global__ void k_fb_mul(const ScalarOf<F> *scalars, size_t m, const Affine<F> *table, int c, int nw, XYZZ<F> *out) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) fb_mul_body(i, scalars, table, c, nw, out);
}
template <class F> __global__ void k_fb_affine(const XYZZ<F> *in, size_t m, size_t g, Affine<F> *out) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < g) fb_affine_body(t, in, m, g, out);
}

const int RED = 128; // threads of a reduction block
static_assert(BITSUM_PER >= 2 * RED && (BITSUM_PER & (BITSUM_PER - 1)) == 0,
              "k_bitsum: a power of two, at least two items a thread");

// block_sum: the sum of the block's RED threads' acc, through sh (RED
// points of shared memory), in sh[0] once every thread has returned.
template <class F> __device__ void block_sum(XYZZ<F> acc, XYZZ<F> *sh) {
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = RED / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            XYZZ<F> a = sh[threadIdx.x];
            a.add(sh[threadIdx.x + s]);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
}

// k_reduce: block b sums in[b·per, min(m, (b+1)·per)) into out[b].
template <class F> __global__ void k_reduce(const XYZZ<F> *in, size_t m, size_t per, XYZZ<F> *out) {
    __shared__ XYZZ<F> sh[RED];
    size_t lo = (size_t)blockIdx.x * per;
    size_t hi = lo + per < m ? lo + per : m;
    XYZZ<F> acc = XYZZ<F>::inf();
    for (size_t i = lo + threadIdx.x; i < hi; i += RED) acc.add(in[i]);
    block_sum(acc, sh);
    if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

// k_bitsum: block b = (set·K + k)·parts + part sums items [part·per,
// (part+1)·per) of class k of the set (msm.cuh, bit_class_item) into
// out[b]; a part past the class's items writes infinity.
template <class F>
__global__ void k_bitsum(const XYZZ<F> *acc, const XYZZ<F> *run, u32 spw, u32 K, u32 parts, u32 per,
                                               XYZZ<F> *out) {
    __shared__ XYZZ<F> sh[RED];
    u32 b = blockIdx.x, part = b % parts, k = (b / parts) % K, set = b / parts / K;
    u32 count = bit_class_count(k, spw), lo = part * per;
    u32 hi = lo + per < count ? lo + per : count;
    XYZZ<F> sum = XYZZ<F>::inf();
    for (u32 i = lo + threadIdx.x; i < hi; i += RED) sum.add(bit_class_item(acc, run, spw, set, k, i));
    block_sum(sum, sh);
    if (threadIdx.x == 0) out[b] = sh[0];
}

// k_weigh: class sum t times its weight (msm.cuh, weigh_body), for
// reduce_buckets' device combine.
template <class F> __global__ void k_weigh(const XYZZ<F> *sums, u32 n, u32 K, int lgS, XYZZ<F> *out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) weigh_body(t, sums, K, lgS, out);
}

// k_ntt_pass: one pass of s stages (see group_pos), G = blockDim/2^(s−1)
// consecutive groups a block, loaded so that consecutive threads read
// consecutive residues (contiguous addresses when mlow ≥ G).
template <class S, bool DIF>
__global__ void __launch_bounds__(512) k_ntt_pass(S *x, u32 n, u32 mlow, int s, u32 ngroups, const S *tw) {
    ZK_DYN_SHARED(S, sh);
    u32 size = 1u << s;
    u32 G = blockDim.x >> (s - 1);
    u32 g0 = blockIdx.x * G;
    for (u32 q = threadIdx.x; q < G * size; q += blockDim.x) {
        u32 k = q / G, gi = q % G;
        if (g0 + gi < ngroups) sh[gi * size + k] = x[group_pos(g0 + gi, k, mlow, s)];
    }
    __syncthreads();
    u32 gi = threadIdx.x >> (s - 1), u = threadIdx.x & ((1u << (s - 1)) - 1);
    u32 g = g0 + gi;
    bool active = g < ngroups;
    u32 r = g % mlow;
    for (int i = 0; i < s; i++) {
        int tt = DIF ? s - 1 - i : i;
        if (active) group_bfly(sh + gi * size, u, tt, r, mlow, n, tw, DIF);
        __syncthreads();
    }
    for (u32 q = threadIdx.x; q < G * size; q += blockDim.x) {
        u32 k = q / G, gi2 = q % G;
        if (g0 + gi2 < ngroups) x[group_pos(g0 + gi2, k, mlow, s)] = sh[gi2 * size + k];
    }
}

// k_ntt_regs: one pass of s stages in radix-8 rounds (ntt.cuh, regs_round):
// G = 2^lgG groups a block of G·2^(s−3) threads (at most 512), copied in and
// out as 16-byte halves (consecutive threads, consecutive addresses) through
// regs_smem_bytes(G·2^s) of dynamic shared memory. scale (null: none; mlow
// = 1 only): the last round multiplies by it in bit-reversed order.
//
// Bulk copy-in: a thread's sixteen halves (2E halves over E/8 threads:
// always sixteen) are loaded into registers first, so that the block waits
// for DRAM once, in blocks of at most 128 threads, five an SM (registers
// held to 102 a thread): NTT_REGS_THREADS, driver.cuh. Lazy reduction
// (ntt.cuh's regs_round, LAZY = true): elements in [0, 2q) in and out of
// the pass, except that the first pass reads canonical ones and, with
// canon (the NTT's last pass), the last round writes canonical ones. The
// copy-in variants, the eager reduction and the groups across lanes that
// were measured against this kernel are in notes/cuda-variants.md; ntt.cuh
// keeps LAZY and GL as template parameters of the bodies (hosttest.cpp
// checks them). BLS12-381's Fr (2q < 2^256, not 4q) is lazy too, its
// products by canonical twiddles (NTT_LAZY).
//
// NttMinBlocks: five blocks an SM. BLS12-381's butterflies spill at 102
// registers (CUDA 13: 132 bytes of stores, lazy or eager, against BN254's
// 8); four blocks an SM (128 registers) or six (85) were both slower (H100,
// notes/h100-2026-12-06c.md call 4, lazy: 2^24 4.77 and 5.02 ms against
// 4.62; eager, notes/h100-2026-12-06.md call 6: 4.74 against 4.68;
// ZK_BLS_NTT_MINB, retired: notes/cuda-variants.md).
template <class S> struct NttMinBlocks {
    static constexpr int value = 5;
};
template <class S, bool DIF>
__global__ void __launch_bounds__(128, NttMinBlocks<S>::value)
    k_ntt_regs(S *x, int lgn, int lgm, int s, int lgG, const S *tw, const S *scale, int canon) {
    ZK_DYN_SHARED(Half, halves);
    const u32 E = 1u << (lgG + s), g0 = blockIdx.x << lgG, mlow = 1u << lgm;
    Half *gx = reinterpret_cast<Half *>(x);
    Half buf[16];
#pragma unroll
    for (int i = 0; i < 16; i++) {
        u32 q = threadIdx.x + (u32)i * blockDim.x, gi, k, h = q & 1;
        regs_elem(q >> 1, lgG, lgm, s, gi, k);
        buf[i] = gx[2 * group_pos(g0 + gi, k, mlow, s) + h];
    }
#pragma unroll
    for (int i = 0; i < 16; i++) {
        u32 q = threadIdx.x + (u32)i * blockDim.x, gi, k, h = q & 1;
        regs_elem(q >> 1, lgG, lgm, s, gi, k);
        halves[h * (E + REGS_PLANE1) + regs_slot_of<false>((gi << s) | k, s)] = buf[i];
    }
    __syncthreads();
    for (int ri = 0; ri < regs_rounds(s); ri++) {
        const bool lastr = ri == regs_rounds(s) - 1;
        regs_round<DIF, NTT_LAZY<S>, false>(halves, E, threadIdx.x, ri, s, g0, lgm, lgn, tw, lastr ? scale : nullptr, lastr && canon);
        __syncthreads();
    }
    for (u32 q = threadIdx.x; q < 2 * E; q += blockDim.x) {
        u32 gi, k, h = q & 1;
        regs_elem(q >> 1, lgG, lgm, s, gi, k);
        gx[2 * group_pos(g0 + gi, k, mlow, s) + h] = halves[h * (E + REGS_PLANE1) + regs_slot_of<false>((gi << s) | k, s)];
    }
}

template <class S> __global__ void k_scale_rev(S *x, u32 n, int logn, const S *tab) {
    u32 p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) x[p] = x[p] * coset_at(tab, bitrev(p, logn), logn);
}

template <class S> __global__ void k_pointwise(S *a, const S *b, const S *c, u32 n, S zinv, int divide) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        S r = a[i] * b[i] - c[i];
        if (divide) r = r * zinv;
        a[i] = r;
    }
}

template <class S> __global__ void k_powers(S *out, size_t count, S base, S f) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) powers_body(i, base, f, out);
}
