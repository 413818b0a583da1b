// ntt.cuh — the per-thread bodies of the NTT kernels over a scalar field S
// (BN254's Fr, BLS12-381's: both four 64-bit limbs): radix-2
// butterflies, bit reversal, powers, and passes of several stages.
#pragma once

#include "field.cuh"

HD u32 bitrev(u32 x, int logn) {
    if (logn == 0) return 0;
#ifdef __CUDA_ARCH__
    return __brev(x) >> (32 - logn);
#else
    u32 r = 0;
    for (int i = 0; i < logn; i++) r |= ((x >> i) & 1u) << (logn - 1 - i);
    return r;
#endif
}

// One radix-2 stage; t < n/2; half = m (the butterfly span); tw[k] = ω^k for
// k < n/2. DIF (natural → bit-reversed): m = n/2 … 1. DIT (bit-reversed →
// natural): m = 1 … n/2.
template <class S> HD void dif_body(u32 t, S *x, u32 n, u32 m, const S *tw) {
    u32 blk = t / m, j = t % m;
    u32 i0 = blk * 2 * m + j, i1 = i0 + m;
    S u = x[i0], v = x[i1];
    x[i0] = u + v;
    x[i1] = (u - v) * tw[(size_t)j * (n / (2 * m))];
}
template <class S> HD void dit_body(u32 t, S *x, u32 n, u32 m, const S *tw) {
    u32 blk = t / m, j = t % m;
    u32 i0 = blk * 2 * m + j, i1 = i0 + m;
    S u = x[i0], v = x[i1] * tw[(size_t)j * (n / (2 * m))];
    x[i0] = u + v;
    x[i1] = u - v;
}

// powers_body: out[i] = f·base^i.
template <class S> HD void powers_body(size_t i, S base, S f, S *out) {
    S r = f, p = base;
    size_t e = i;
    while (e) {
        if (e & 1) r = r * p;
        p = p.sqr();
        e >>= 1;
    }
    out[i] = r;
}

// ─── NTT passes of several stages in shared memory ──────────────────────────
//
// A pass runs s consecutive radix-2 stages, m = mlow·2^(s−1) … mlow (DIF) or
// mlow … mlow·2^(s−1) (DIT). The butterflies of these stages pair elements
// that differ by multiples of mlow inside blocks of mlow·2^s, so they split
// into n/2^s independent groups of 2^s elements: group g is
// {b·mlow·2^s + r + k·mlow : k < 2^s} with b = g / mlow, r = g % mlow.

HD size_t group_pos(u32 g, u32 k, u32 mlow, int s) {
    u32 b = g / mlow, r = g % mlow;
    return (size_t)b * ((size_t)mlow << s) + r + (size_t)k * mlow;
}

// group_bfly: butterfly u (< 2^(s−1)) of stage tt (m = mlow·2^tt) on the
// group's elements sh[0 … 2^s), for group residue r.
template <class S> HD void group_bfly(S *sh, u32 u, int tt, u32 r, u32 mlow, u32 n, const S *tw, bool dif) {
    u32 half = 1u << tt;
    u32 k0 = (u >> tt) * 2 * half + (u & (half - 1)), k1 = k0 + half;
    u32 m = mlow << tt;
    u32 j = r + (u & (half - 1)) * mlow;
    S w = tw[(size_t)j * (n / (2 * m))];
    S a = sh[k0], b = sh[k1];
    if (dif) {
        sh[k0] = a + b;
        sh[k1] = (a - b) * w;
    } else {
        b = b * w;
        sh[k0] = a + b;
        sh[k1] = a - b;
    }
}

// ─── NTT passes with eight elements a thread (k_ntt_regs) ───────────────────
//
// The passes and groups above, but a thread holds eight elements of one
// group in registers and runs up to three stages on them between two trips
// through shared memory (radix-8 rounds): a pass of s stages costs ⌈s/3⌉
// rounds and barriers instead of s, and a third of the shared-memory
// traffic. The radix-2 pass above spends more time on shared memory (a
// butterfly reads and writes 128 bytes, conflicted) than on its product.
//
// In a round the three register bits of an element's in-group index k are a
// window [b0, b0+3): thread τ (< 2^(s−3) a group) holds the eight elements
// k(i) = τ_hi·2^(b0+3) + i·2^b0 + τ_lo, i < 8, where τ_lo = τ mod 2^b0 and
// τ_hi = τ >> b0. DIT rounds take the windows [0,3), [3,6), … (the last at
// [s−3, s), doing only the stages left); DIF the same from the top down.
//
// Twiddles: stage tt of a pass (m = mlow·2^tt) multiplies by ω^(j·n/2m) with
// j = r + u·mlow (r the group's residue, u = k mod 2^tt): read from tw with
// the read-only cache, and not multiplied at all where the index is 0 (all
// of the DIT's first stage and DIF's last, half of the next, …: about
// 2·n/2 of the (n/2)·log n products).

// Half is half a scalar (four limbs): shared memory holds a block's elements in two planes
// of 16-byte halves, so that a thread's accesses are single 16-byte ones.
struct alignas(16) Half {
    u64 lo, hi;
};

// regs_slot: the slot of block-local element K = group·2^s + k in a plane.
// The low three bits are XORed with bits 3–5 (and, when a group has at least
// eight threads a round, with the group's low bits), so that the eight
// threads of a quarter-warp hit eight different 16-byte bank groups in every
// round's access pattern (hosttest checks it for every s and round).
HD u32 regs_slot(u32 K, int s) {
    u32 f = (K >> 3) ^ (s >= 6 ? K >> s : 0);
    return K ^ (f & 7);
}

// Groups across lanes (GL, regs_lanes_ok; a compile-time option since ABI 9): in the passes of
// large mlow a group's lanes read twiddles 2^(lgm+5) bytes and more apart,
// one 32-byte sector a line (e = (r + u·mlow)·2^sh, consecutive lanes
// consecutive u). With GL, thread t of a block takes group gi = t mod 4
// and τ = t / 4 instead of gi = t / 2^(s−3), τ = t mod 2^(s−3), so that
// four consecutive lanes read the same u of four consecutive residues r:
// 128 contiguous bytes. Its quarter-warps are then four groups × two τ, for
// which regs_slot's swizzle folds a group bit and τ's bit into one bank
// bit; regs_slot_lanes instead XORs the low three bits with bits 3–5, the
// group's two low bits (into bits 0–1) and bit 0 ⊕ bit 3 (into bit 2): a
// bijection of the low bits in which τ's varying bit (K bit 0, or 3 when
// b0 = 0) moves bank bits 0 and 2 and the group bits 0 and 1, and in which
// the copies' eight-lane runs (four consecutive groups' elements × two
// halves, REGS_PLANE1 apart) still hit all eight bank groups. hosttest
// checks both patterns for the passes regs_lanes_ok admits: four groups a
// block (the default blocks of 1024 elements with 8 stages), s ≥ 6, and
// mlow ≥ 4 (runs of four consecutive residues in the copies).
HD bool regs_lanes_ok(int s, int lgG, int lgm) { return lgG == 2 && s >= 6 && lgm >= lgG; }
HD u32 regs_slot_lanes(u32 K, int s) {
    u32 f = (K >> 3) ^ ((K >> s) & 3) ^ (((K ^ (K >> 3)) & 1) << 2);
    return K ^ (f & 7);
}
template <bool GL> HD u32 regs_slot_of(u32 K, int s) { return GL ? regs_slot_lanes(K, s) : regs_slot(K, s); }
// regs_thread: thread t's group gi in the block and index τ in the group
// (groups of 2^(s−3) threads; GL: four groups).
template <bool GL> HD void regs_thread(u32 t, int s, u32 &gi, u32 &tau) {
    if (GL) {
        gi = t & 3;
        tau = t >> 2;
    } else {
        gi = t >> (s - 3);
        tau = t & ((1u << (s - 3)) - 1);
    }
}

// REGS_PLANE1 is where plane 1 starts beyond plane 0's E slots: four slots
// (64 bytes) off, so that the two halves of four consecutive elements, read
// by eight consecutive threads in the global ↔ shared copies, use all eight
// bank groups.
const u32 REGS_PLANE1 = 4;
HD size_t regs_smem_bytes(u32 E) { return (2 * (size_t)E + REGS_PLANE1) * sizeof(Half); }

template <class S> HD S regs_get(const Half *sh, u32 E, u32 c) {
    static_assert(S::N == 4, "regs: two 16-byte halves an element");
    Half a = sh[c], b = sh[E + REGS_PLANE1 + c];
    S r;
    r.v[0] = a.lo;
    r.v[1] = a.hi;
    r.v[2] = b.lo;
    r.v[3] = b.hi;
    return r;
}
template <class S> HD void regs_put(Half *sh, u32 E, u32 c, const S &x) {
    sh[c] = Half{x.v[0], x.v[1]};
    sh[E + REGS_PLANE1 + c] = Half{x.v[2], x.v[3]};
}

// tw_load reads a twiddle through the read-only data cache.
template <class S> HD S tw_load(const S *tw, u32 e) {
    static_assert(S::N == 4, "tw_load: two 16-byte loads an element");
    S r;
#ifdef __CUDA_ARCH__
    const ulonglong2 *p = reinterpret_cast<const ulonglong2 *>(tw + e);
    ulonglong2 a = __ldg(p), b = __ldg(p + 1);
    r.v[0] = a.x;
    r.v[1] = a.y;
    r.v[2] = b.x;
    r.v[3] = b.y;
#else
    r = tw[e];
#endif
    return r;
}

// The coset tables in two levels (ABI 14): the scale g^j/n of position j
// of an n = 2^lgn NTT is lo[j mod 2^h]·hi[j >> h], h = coset_split(lgn),
// from one table t of coset_entries(lgn) elements, lo = t[0, 2^h) holding
// g^jl and hi = t[2^h, …) holding g^(jh·2^h)/n. Against a table of n
// scales it costs one more product an element in the one pass that scales
// (the DIF's last), and two tables of about 2·√n instead of 2n elements:
// at 2^27, 12 KiB instead of 8 GiB of the device's memory for a key.
HD int coset_split(int lgn) { return (lgn + 1) / 2; }
HD size_t coset_entries(int lgn) {
    return ((size_t)1 << coset_split(lgn)) + ((size_t)1 << (lgn - coset_split(lgn)));
}
template <class S> HD S coset_at(const S *t, u32 j, int lgn) {
    const int h = coset_split(lgn);
    return tw_load(t, j & ((1u << h) - 1)) * tw_load(t + ((size_t)1 << h), j >> h);
}

// regs_elem maps the q-th element of a block's copy (q < G·2^s; G = 2^lgG
// groups from group g0, a multiple of G) to its group gi and index k, so
// that consecutive q are at consecutive addresses where they can be: when
// mlow ≥ G the block's groups are G consecutive residues of one b (runs of
// G elements); when mlow < G its elements are one contiguous range.
HD void regs_elem(u32 q, int lgG, int lgm, int s, u32 &gi, u32 &k) {
    if (lgm >= lgG) {
        k = q >> lgG;
        gi = q & ((1u << lgG) - 1);
    } else {
        u32 bl = q >> (lgm + s), rem = q & ((1u << (lgm + s)) - 1);
        k = rem >> lgm;
        gi = (bl << lgm) | (rem & ((1u << lgm) - 1));
    }
}

// Lazy reduction (LAZY; the kernel takes LAZY = true): elements stay in
// [0, 2q) between butterflies, rounds and passes (field.cuh: 2q < 2^256 and
// each product's twiddle canonical, LAZY_BY_OK). A twiddle product skips
// its final subtraction (mul_lazy_by: an input < 2q by a canonical
// twiddle, result < 2q), a sum subtracts 2q if ≥ 2q, a
// difference adds 2q if it borrowed. The NTT's inputs and twiddles are
// canonical; its output is made canonical by the last round of its last
// pass (`canon`): reduce_2q, or the fused scaling's mul32_by (canonical
// from a lazy input: field.cuh). Without LAZY the butterflies are canonical
// throughout and canon changes nothing.
template <bool LAZY, class S> HD S bf_add(const S &a, const S &b) {
    if constexpr (LAZY) return S::add_lazy2q(a, b);
    else return a + b;
}
template <bool LAZY, class S> HD S bf_sub(const S &a, const S &b) {
    if constexpr (LAZY) return S::sub_lazy2q(a, b);
    else return a - b;
}
template <bool LAZY, class S> HD S bf_mul(const S &a, const S &w) {
    if constexpr (LAZY) return S::mul_lazy_by(a, w);
    else return a * w;
}

// NTT_LAZY<S>: whether the NTT kernels over S keep lazy [0, 2q) elements.
// BN254's Fr has 4q < 2^256. BLS12-381's Fr (255 bits) has only 2q < 2^256,
// which suffices as every product has a canonical twiddle (mul_lazy_by) and
// a sum's carry out of 2^256 is kept (add_lazy2q): 2^24 in 4.62 ms against
// 4.68 eager (H100, notes/h100-2026-12-06c.md, call 2: A B A B, BN254's NTT
// unchanged at 3.99; the eager build, ZK_BLS_NTT_LAZY=0, is retired:
// notes/cuda-variants.md). hosttest checks the lazy butterflies against the eager.
template <class S> constexpr bool NTT_LAZY = S::HEADROOM_4Q || S::LAZY_BY_OK;

// regs_rounds is how many rounds a pass of s stages takes.
HD int regs_rounds(int s) { return (s + 2) / 3; }

// regs_round: round ri of a pass (s stages, mlow = 2^lgm, n = 2^lgn) for
// thread t of a block whose first group is g0, on shared memory sh of E
// elements: read eight elements, run the round's stages, write them back.
// Threads of one round touch disjoint elements: rounds are separated by
// barriers, nothing inside one. scale (null: none), in a pass with mlow = 1
// only: after the stages, element p (its position in x) is multiplied by
// the scale at bitrev(p) of the two-level table scale (coset_at), as
// scale_rev would in a pass of its own. canon (LAZY
// only; the last round of an NTT's last pass): the elements written are
// canonical, in [0, q), not only below 2q. GL: groups across lanes
// (regs_thread, regs_slot_of; only where regs_lanes_ok).
template <bool DIF, bool LAZY = false, bool GL = false, class S>
HD void regs_round(Half *sh, u32 E, u32 t, int ri, int s, u32 g0, int lgm, int lgn, const S *tw,
                   const S *scale = nullptr, bool canon = false) {
    int tt0, tt1;
    if (DIF) {
        tt1 = s - 3 * ri;
        tt0 = tt1 > 3 ? tt1 - 3 : 0;
    } else {
        tt0 = 3 * ri;
        tt1 = tt0 + 3 < s ? tt0 + 3 : s;
    }
    const int b0 = DIF ? tt0 : (tt0 < s - 3 ? tt0 : s - 3);
    u32 gi, tau;
    regs_thread<GL>(t, s, gi, tau);
    const u32 lo = tau & ((1u << b0) - 1), hi = tau >> b0;
    const u32 kb = (gi << s) | (hi << (b0 + 3)) | lo;
    const u32 r = (g0 + gi) & ((1u << lgm) - 1);
    S x[8];
#pragma unroll
    for (int i = 0; i < 8; i++) x[i] = regs_get<S>(sh, E, regs_slot_of<GL>(kb | ((u32)i << b0), s));
#pragma unroll
    for (int pi = 0; pi < 3; pi++) {
        const int p = DIF ? 2 - pi : pi, tt = b0 + p;
        if (tt < tt0 || tt >= tt1) continue;
        const int sh_tw = lgn - lgm - tt - 1; // n/(2m) = 2^sh_tw
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int low = j & ((1 << p) - 1);
            const int i0 = ((j >> p) << (p + 1)) | low, i1 = i0 | (1 << p);
            u32 u = ((u32)low << b0) | lo; // k(i0) mod 2^tt
            u32 e = (r + (u << lgm)) << sh_tw;
            S a = x[i0], b = x[i1];
            if (DIF) {
                x[i0] = bf_add<LAZY>(a, b);
                b = bf_sub<LAZY>(a, b);
                x[i1] = e ? bf_mul<LAZY>(b, tw_load(tw, e)) : b;
            } else {
                if (e) b = bf_mul<LAZY>(b, tw_load(tw, e));
                x[i0] = bf_add<LAZY>(a, b);
                x[i1] = bf_sub<LAZY>(a, b);
            }
        }
    }
    if (scale) { // LAZY: mul32_by, canonical from lazy elements too
#pragma unroll
        for (int i = 0; i < 8; i++) {
            S f = coset_at(scale, bitrev((g0 << s) + (kb | ((u32)i << b0)), lgn), lgn);
            if constexpr (LAZY) x[i] = S::mul32_by(x[i], f);
            else x[i] = x[i] * f;
        }
    } else if constexpr (LAZY) {
        if (canon) {
#pragma unroll
            for (int i = 0; i < 8; i++) x[i] = S::reduce_2q(x[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) regs_put(sh, E, regs_slot_of<GL>(kb | ((u32)i << b0), s), x[i]);
}

// RegsPass is one pass of an NTT in regs rounds: s stages (3 ≤ s ≤ 12) from
// mlow = 2^lgm, G = 2^lgG groups a block.
struct RegsPass {
    int lgm, s, lgG;
};

// regs_plan splits the log n stages of an NTT (logn ≥ 3) into passes of at
// most `stages` stages (3 to 12; a few more where passes of `stages` would
// leave one below 3), as equal as possible, and blocks of about
// 2^lgblock elements: DIF from the top stage down, DIT from the bottom up.
// Returns the number of passes written to out (at most 10).
HD int regs_plan(int logn, int stages, int lgblock, bool difp, RegsPass out[10]) {
    int np = (logn + stages - 1) / stages, done = 0;
    if (np > logn / 3) np = logn / 3; // every pass at least 3 stages (logn = 4, stages = 3: one of 4)
    for (int p = 0; p < np; p++) {
        int left = np - p, s = (logn - done + left - 1) / left; // larger passes first
        int lgG = lgblock > s ? lgblock - s : 0;
        if (lgG > logn - s) lgG = logn - s; // no more groups than there are
        out[p].s = s;
        out[p].lgG = lgG;
        out[p].lgm = difp ? logn - done - s : done;
        done += s;
    }
    return np;
}
