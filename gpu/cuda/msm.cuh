// msm.cuh — the per-thread bodies of the MSM and batch-addition kernels
// (bucket method with signed digits), and the MSM's window choice. The plan
// of one MSM's sizes and the driver that runs it are in driver.cuh.
#pragma once

#include "curve.cuh"

// bits_at returns bits [s, s+c) of the 256-bit little-endian k (c ≤ 32).
HD u32 bits_at(const u64 k[4], int s, int c) {
    int limb = s >> 6, off = s & 63;
    if (limb >= 4) return 0;
    u64 v = k[limb] >> off;
    if (off + c > 64 && limb + 1 < 4) v |= k[limb + 1] << (64 - off);
    return (u32)(v & ((1ULL << c) - 1));
}

// digits_body: signed c-bit digits of scalar i (Montgomery form in), for
// every window w: key = key0 + w·2^(c−1) + |d| − 1, or the sentinel for
// d = 0; val = (idx ? idx[i] : i) | sign<<31, the base's own index (the
// levels read bases[val] directly). Written at [w·n + i]. key0 puts one
// vector of a batch in its own bucket sets (driver.cuh, MsmPlan).
// signed_digit: window w's digit of k in [0, 2^(c−1)] and its sign, from
// the c bits there plus the carry out of the window below (updated).
template <class S> HD u32 signed_digit(const S &k, int w, int c, u32 &carry, u32 &sign) {
    u32 half = 1u << (c - 1);
    u32 d = bits_at(k.v, w * c, c) + carry;
    sign = d > half;
    carry = sign;
    return sign ? (1u << c) - d : d;
}

template <class S>
HD void digits_body(size_t i, const S *scalars, const u32 *idx, size_t n, int c, int nw, u32 key0, u32 sentinel,
                    u32 *keys, u32 *vals) {
    static_assert(S::N == 4, "bits_at reads four 64-bit limbs");
    S k = scalars[i].from_mont();
    u32 half = 1u << (c - 1);
    u32 bi = idx ? idx[i] : (u32)i;
    u32 carry = 0;
    for (int w = 0; w < nw; w++) {
        u32 sign;
        u32 d = signed_digit(k, w, c, carry, sign);
        size_t at = (size_t)w * n + i;
        keys[at] = d == 0 ? sentinel : key0 + (u32)w * half + d - 1;
        vals[at] = bi | (sign << 31);
    }
}

// ─── precomputed tables ─────────────────────────────────────────────────────
//
// A table of nbase bases for c-bit windows holds every base's multiples
// 2^(c·w)·P_i for w < nw, at [w·nbase + i], affine. Digit d of window w of
// scalar k then adds d·2^(c·w)·P_i to bucket |d| of ONE set of 2^(c−1)
// buckets shared by all windows: each bucket gathers nw times the points
// (even chunks at every size), the sort's keys need c bits instead of
// c + log₂nw, and one window's bucket sums remain to reduce, with no
// doublings between windows. The price: nw times the bases' memory.

// precompute_body fills base i's column of the table.
template <class F>
HD void precompute_body(size_t i, const Affine<F> *bases, size_t nbase, int c, int nw, Affine<F> *table) {
    Affine<F> p = bases[i];
    table[i] = p;
    XYZZ<F> acc = XYZZ<F>::inf();
    if (!p.is_inf()) {
        acc.X = p.x;
        acc.Y = p.y;
        acc.ZZ = field_one<F>();
        acc.ZZZ = field_one<F>();
    }
    for (int w = 1; w < nw; w++) {
        for (int k = 0; k < c; k++) acc.dbl_assign();
        table[(size_t)w * nbase + i] = acc.to_affine();
    }
}

// digits_table_body: as digits_body, for a table: key key0 + |d| − 1
// (the sentinel for d = 0), val = (w·nbase + base index) | sign<<31.
template <class S>
HD void digits_table_body(size_t i, const S *scalars, const u32 *idx, size_t n, size_t nbase, int c, int nw,
                          u32 key0, u32 sentinel, u32 *keys, u32 *vals) {
    static_assert(S::N == 4, "bits_at reads four 64-bit limbs");
    S k = scalars[i].from_mont();
    u32 bi = idx ? idx[i] : (u32)i;
    u32 carry = 0;
    for (int w = 0; w < nw; w++) {
        u32 sign;
        u32 d = signed_digit(k, w, c, carry, sign);
        size_t at = (size_t)w * n + i;
        keys[at] = d == 0 ? sentinel : key0 + d - 1;
        vals[at] = (u32)((size_t)w * nbase + bi) | (sign << 31);
    }
}

// runs_body: bucket b's run [start[b], start[b] + cnt[b]) in the m sorted
// keys, by two binary searches (a thread a bucket: nb·2·log₂m reads, where
// marking each run's ends from the keys reads all m of them).
HD u32 lower_bound_key(const u32 *keys, size_t m, u32 k) {
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = (lo + hi) >> 1;
        if (keys[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (u32)lo;
}
HD void runs_body(u32 b, const u32 *keys, size_t m, u32 *start, u32 *cnt) {
    u32 s = lower_bound_key(keys, m, b);
    start[b] = s;
    cnt[b] = lower_bound_key(keys, m, b + 1) - s;
}

// The first level sums the sorted points in tiles of L: tile t is
// [t·L, (t+1)·L), every thread the same number of additions whatever the
// buckets' sizes (a thread a bucket's chunk left a warp waiting for its
// longest chunk: 86% of the addition rate at 2^22, where buckets hold about
// 100 points). A tile that meets several buckets' runs writes a partial sum
// for each; bucket b's partial from tile t goes to off[b] + t − ⌊start[b]/L⌋,
// and tiles_body counts them.
HD void tiles_body(u32 b, const u32 *start, const u32 *cnt, u32 L, u32 *chunks) {
    u32 c = cnt[b];
    chunks[b] = c ? (u32)(((u64)start[b] + c - 1) / L - start[b] / L + 1) : 0;
}

// find_seg: the b with off[b] ≤ t < off[b] + cnt[b], or −1 (binary search:
// the last b with off[b] ≤ t, which skips empty runs that share an offset).
HD long find_seg(const u32 *off, const u32 *cnt, u32 nb, u32 t) {
    u32 lo = 0, hi = nb; // first index with off > t in [lo, hi]
    while (lo < hi) {
        u32 mid = (lo + hi) >> 1;
        if (off[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return -1;
    u32 b = lo - 1;
    if (t >= off[b] + cnt[b]) return -1;
    return (long)b;
}

// chunk_at finds chunk t's run [lo, hi) of the sorted points: bucket b's
// cnt points split evenly over its chunks = ⌈cnt/L⌉ (so at most L each,
// and a bucket of L+1 points is two chunks of ⌈(L+1)/2⌉ and ⌊(L+1)/2⌋, not
// L and 1: the threads of a warp wait for the longest chunk among them).
HD bool chunk_at(u32 t, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb, u32 *lo,
                 u32 *hi) {
    long b = find_seg(off, chunks, nb, t);
    if (b < 0) return false;
    u32 j = t - off[b], k = chunks[b], c = cnt[b];
    *lo = start[b] + (u32)(((u64)j * c) / k);
    *hi = start[b] + (u32)(((u64)(j + 1) * c) / k);
    return true;
}

// LateY: BLS12-381's G2 level0 (255 registers, two warps a scheduler) reads
// a point's y only once
// P = x·ZZ − X is known (XYZZ::add_affine_late), so that y's 24 registers
// are not held through P's product. Spill stores fell from 572 to 52 bytes
// (CUDA 13; nvcc 11.8: 584 to 132); H100, notes/h100-2026-12-06d.md call 6,
// A B A B: its MSM 2^20 25.4, 25.3, 25.4 ms against 27.0, 26.6, 26.4;
// BLS12-381's mulchain 2^20 stream 15.53 and 15.97 proofs/s against 15.31
// and 15.50 (call 7). The other fields read points whole (hosttest checks
// both bodies); the old G2 body (ZK_LEVEL0_LATE_Y=0) is retired:
// notes/cuda-variants.md.
template <class F> struct LateY {
    static constexpr bool ON = sizeof(F) == sizeof(Bls12381Fp2);
};

// level0_body: tile t of the m sorted (key, val) pairs, keys < nb a bucket's
// (the sentinel nb, digits of 0, sorts last): the sum of each bucket's
// signed bases in it, written where tiles_body's layout puts it (start, off:
// the buckets' runs and their first partial's slot). PF
// (G1 only, driver.cuh's LEVEL0_PREFETCHES): the next pair and point are loaded
// before this point's addition, so that a random 64-byte read (from DRAM at
// 2^22 and up) runs under the arithmetic instead of before it.
// level0_src: the base a sorted pair's val names (its top bit is the
// digit's sign); level0_point: that base.
template <class F> HD const Affine<F> *level0_src(const Affine<F> *bases, const u32 *idx, u32 v) {
    u32 i = v & 0x7fffffffu;
    return bases + (idx ? idx[i] : i);
}
template <class F> HD Affine<F> level0_point(const Affine<F> *bases, const u32 *idx, u32 v) {
    return *level0_src(bases, idx, v);
}
template <class F> HD void level0_add(XYZZ<F> &acc, const Affine<F> &a, u32 v, const F &one) {
    if (a.is_inf()) return;
    F y = (v >> 31) ? a.y.neg() : a.y;
    acc.add_affine(a.x, y, one);
}
template <class F, bool PF = false>
HD void level0_body(u32 t, const Affine<F> *bases, const u32 *idx, const u32 *keys, const u32 *vals, size_t m,
                    u32 nb, const u32 *start, const u32 *off, u32 L, XYZZ<F> *out) {
    size_t p = (size_t)t * L;
    if (p >= m) return;
    const size_t end = p + L < m ? p + L : m;
    u32 b = keys[p];
    if (b >= nb) return; // only digits of 0 from here
    const F one = field_one<F>();
    XYZZ<F> acc = XYZZ<F>::inf();
    if (PF) {
        u32 k = b, v = vals[p];
        Affine<F> a = level0_point(bases, idx, v);
        for (; p < end; p++) {
            const u32 ck = k, cv = v;
            const Affine<F> ca = a;
            if (p + 1 < end) { // a digit of 0's val is a base's index too: safe to load
                k = keys[p + 1];
                v = vals[p + 1];
                a = level0_point(bases, idx, v);
            }
            if (ck != b) {
                out[off[b] + t - start[b] / L] = acc;
                if (ck >= nb) return;
                b = ck;
                acc = XYZZ<F>::inf();
            }
            level0_add(acc, ca, cv, one);
        }
    } else {
        for (; p < end; p++) {
            const u32 k = keys[p];
            if (k != b) {
                out[off[b] + t - start[b] / L] = acc;
                if (k >= nb) return;
                b = k;
                acc = XYZZ<F>::inf();
            }
            const u32 v = vals[p];
            if constexpr (LateY<F>::ON) {
                const Affine<F> *a = level0_src(bases, idx, v);
                const F x = a->x;
                if (x.is_zero() && a->y.is_zero()) continue; // infinity
                acc.add_affine_late(x, &a->y, (v >> 31) != 0, one);
            } else {
                level0_add(acc, level0_point(bases, idx, v), v, one);
            }
        }
    }
    out[off[b] + t - start[b] / L] = acc;
}

// levelN_body: the same over points already summed (XYZZ).
template <class F>
HD void levelN_body(u32 t, const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks,
                    u32 nb, u32 L, XYZZ<F> *out) {
    u32 lo, hi;
    if (!chunk_at(t, start, cnt, off, chunks, nb, &lo, &hi)) return;
    XYZZ<F> acc = in[lo];
    for (u32 p = lo + 1; p < hi; p++) acc.add(in[p]);
    out[t] = acc;
}

// chunks_body: chunks[b] = ⌈cnt[b]/L⌉.
HD void chunks_body(u32 b, const u32 *cnt, u32 L, u32 *chunks) { chunks[b] = (cnt[b] + L - 1) / L; }

// bucket: bucket b's sum once every bucket has at most one chunk.
template <class F> HD XYZZ<F> bucket_at(const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 b) {
    return cnt[b] ? P[start[b]] : XYZZ<F>::inf();
}

// ─── bucket reduction: Σ (q+1)·B_q over each set of half buckets ───────────
//
// A set's weighted sum W = Σ_q (q+1)·B_q is taken in three steps whose
// chains of dependent additions are short, since a chain, not the work,
// bounds this phase: it runs on few threads, each addition a few µs
// (BLS12-381's G2: about 50 µs at one warp a scheduler).
//  1. segment_body: segment j of S buckets [lo, lo+S), lo = j·S, gives
//     acc_j = Σ (q − lo + 1)·B_q (a running sum from the top: 2S − 1
//     additions) and run_j = Σ B_q;
//  2. k_bitsum (kernels.cuh, over bit_class_item): the set's spw = half/S
//     segments in classes, class 0 A = Σ_j acc_j and class 1 + b
//     T_b = Σ_{j: bit b of j} run_j, each summed by blocks in parallel;
//  3. combine_bits: W = A + S·Σ_j j·run_j = A + Σ_b 2^(b + log₂S)·T_b
//     (Horner on the host, or weigh_body's doublings on the device).
// It replaced a segment's multiplication of run_j by lo (up to 15
// doublings and 7 additions after its 2S − 1) and a reduction of the
// segments in one block a set.

// segment_body: segment s (set s / spw, spw = half/S) of the buckets
// (bucket q holds digit q+1): acc[s] = Σ (q − lo + 1)·B_q, run[s] = Σ B_q.
template <class F>
HD void segment_body(u32 s, const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, XYZZ<F> *acc_out,
                     XYZZ<F> *run_out) {
    u32 spw = half / S;
    u32 w = s / spw, j = s % spw;
    u32 lo = j * S;
    XYZZ<F> run = XYZZ<F>::inf(), acc = XYZZ<F>::inf();
    for (int q = (int)(lo + S) - 1; q >= (int)lo; q--) {
        run.add(bucket_at(P, start, cnt, w * half + (u32)q));
        acc.add(run);
    }
    acc_out[s] = acc;
    run_out[s] = run;
}

// BITSUM_PER: the items of a class one k_bitsum block sums at least (two a
// thread of kernels.cuh's RED); bitsum_per doubles it, up to
// BITSUM_PER_MAX (16 a thread, summed in a chain before the block's tree),
// while the launch keeps BITSUM_MIN_BLOCKS blocks: at 2^19 buckets
// (BLS12-381's G1 MSM 2^22) bitsum's 262K additions in 2,048 blocks of 256
// items took 0.59 ms, as long as the segment kernel's 1M, most threads idle
// in the trees (notes/h100-2026-12-06f.md); 256 blocks of 2048 items measured
// 25.6 and 25.8 ms against 26.2 and 26.2, and 89.8 and 89.5 at 2^24 against
// 89.9 and 90.0, but 9.0 against 8.4 and 8.8 at 2^20, where 2^15 buckets
// make 208 blocks of 256 (notes/h100-2026-12-06g.md call 1; the fixed blocks
// of 256, ZK_BITSUM_PER_MAX=256, 7.9 / 25.3 / 88.9 ms in call 2 against 8.0 /
// 25.0 / 88.7: ZK_BITSUM_PER and ZK_BITSUM_PER_MAX are retired,
// notes/cuda-variants.md).
const u32 BITSUM_PER = 256, BITSUM_PER_MAX = 2048, BITSUM_MIN_BLOCKS = 256;

// bitsum_per: the items a k_bitsum block sums for sets of K classes over
// spw segments (spw a power of two): BITSUM_PER (or spw, if fewer), doubled
// while it stays within spw and BITSUM_PER_MAX and the launch's blocks,
// sets·K·spw/per, stay at least BITSUM_MIN_BLOCKS.
HD u32 bitsum_per(u32 spw, u32 K, u32 sets) {
    u32 per = spw < BITSUM_PER ? spw : BITSUM_PER;
    while (per * 2 <= BITSUM_PER_MAX && per * 2 <= spw &&
           (size_t)sets * K * (spw / (per * 2)) >= BITSUM_MIN_BLOCKS)
        per *= 2;
    return per;
}

// bit_classes: the classes of a set of spw segments (spw a power of two):
// A and one T_b a bit of the segment's index.
HD u32 bit_classes(u32 spw) {
    u32 k = 1;
    while ((1u << (k - 1)) < spw) k++;
    return k;
}

// bit_class_count: the items of class k of a set of spw segments.
HD u32 bit_class_count(u32 k, u32 spw) { return k ? spw / 2 : spw; }

// bit_class_item: item i of class k, a segment of the set: class 0 takes
// acc_i; class 1 + b takes run_j for the i-th j with bit b set.
template <class F>
HD const XYZZ<F> &bit_class_item(const XYZZ<F> *acc, const XYZZ<F> *run, u32 spw, u32 set, u32 k, u32 i) {
    if (k == 0) return acc[(size_t)set * spw + i];
    u32 b = k - 1, low = i & ((1u << b) - 1);
    u32 j = ((i >> b) << (b + 1)) | (1u << b) | low;
    return run[(size_t)set * spw + j];
}

// combine_bits: the set's W from its K = bit_classes(spw) class sums
// (sums[0] = A, sums[1 + b] = T_b) and lgS = log₂S: Horner from the top bit.
template <class F> HD XYZZ<F> combine_bits(const XYZZ<F> *sums, u32 K, int lgS) {
    XYZZ<F> r = XYZZ<F>::inf();
    for (int k = (int)K - 1; k >= 1; k--) {
        r.dbl_assign();
        r.add(sums[k]);
    }
    for (int i = 0; i < lgS; i++) r.dbl_assign();
    r.add(sums[0]);
    return r;
}

// weigh_body: class sum t (set t / K, class t % K) times its weight,
// 2^(b + lgS) for T_b, 1 for A: the device's step 3 for many sets, whose
// reduction of each set's K weighed sums follows (k_reduce).
template <class F> HD void weigh_body(u32 t, const XYZZ<F> *sums, u32 K, int lgS, XYZZ<F> *out) {
    u32 k = t % K;
    XYZZ<F> p = sums[t];
    if (k) {
        int d = (int)k - 1 + lgS;
        for (int i = 0; i < d; i++) p.dbl_assign();
    }
    out[t] = p;
}

// ones_body: the sum of the bases of word t of the ones bitmap.
template <class F> HD void ones_body(size_t t, const Affine<F> *bases, const u64 *bitmap, size_t n, XYZZ<F> *out) {
    u64 w = bitmap[t];
    F one = field_one<F>();
    XYZZ<F> acc = XYZZ<F>::inf();
    while (w) {
        int bit = 0;
#ifdef __CUDA_ARCH__
        bit = __ffsll((long long)w) - 1;
#else
        bit = __builtin_ctzll(w);
#endif
        w &= w - 1;
        size_t j = t * 64 + (size_t)bit;
        if (j >= n) break;
        const Affine<F> &a = bases[j];
        if (!a.is_inf()) acc.add_affine(a.x, a.y, one);
    }
    out[t] = acc;
}

// MSM_MAX_WINDOW is the widest window: 2^23 buckets a set.
const int MSM_MAX_WINDOW = 24;

// window count and size for an MSM of n points (override: a window size
// from 4 to MSM_MAX_WINDOW bits, 0 for this choice).
HD int msm_window(size_t n, int override = 0) {
    if (override >= 4 && override <= MSM_MAX_WINDOW) return override;
    int lg = 0;
    while (lg < 40 && ((size_t)1 << (lg + 1)) <= n) lg++;
    int c = lg - 4;
    if (c < 4) c = 4;
    if (c > 16) c = 16;
    return c;
}
// msm_windows: the c-bit windows of a scalar of S: its S::BITS bits and one
// more for the signed digits' last carry (BN254's 254 bits: ⌈255/c⌉, as
// before the curve seam; BLS12-381's 255: ⌈256/c⌉). The top window's raw
// value is then below 2^(c−1), so its digit, carry in, takes no carry out.
template <class S = Fr> HD int msm_windows(int c) { return (S::BITS + 1 + c - 1) / c; }

// msm_table_window: the window of a table over nbase bases. Over a table
// every window's digits share one set of 2^(c−1) buckets, so a wider window
// costs only those buckets' reduction (two additions a bucket) while it
// saves n additions a window it removes: past 2^20 bases, ⌊log₂n⌋ − 2 bits
// up to 20 (2^22 and up: 20 bits, 13 windows instead of 16). Runs 1–3 of
// notes/h200-2026-12-01d.md: 20 bits best or level at 2^22 and 2^24 (19 and
// 20 within the runs' spread at 2^22, 20 with less table memory); 21, 22
// and 24 lost to the reduction of their 2^20 or more buckets.
//
// wide: a curve whose additions cost about 2.25× BN254's (BLS12-381) while
// its digits, sorts and buckets cost the same, so that fewer windows pay
// sooner: from 2^19 bases it takes 20 bits (13 windows, not msm_window's 15
// bits and 18). Measured on the H100 (notes/h100-2026-12-06.md, call 6): BLS12-381
// mulchain 2^20 (tails of about 10^6 bases) 15.34 and 15.40 proofs/s against
// 14.39 and 14.38, a G1 MSM over 2^19 bases 6.1 ms against 6.4; at 2^20 bases
// 16 bits stay best (8.9 ms against 9.3 for 20); BN254 unchanged (its stream
// 32.70 against 32.46, within the runs' spread).
//
// from24: where not 0, the window from 2^24 bases (BLS12-381's G1: 22,
// driver.cuh's TableWindows, which says why and what it measured).
HD int msm_table_window(size_t nbase, int override = 0, bool wide = false, int from24 = 0) {
    if (override >= 4 && override <= MSM_MAX_WINDOW) return override;
    int lg = 0;
    while (lg < 40 && ((size_t)1 << (lg + 1)) <= nbase) lg++;
    if (from24 && lg >= 24) return from24;
    if (wide && lg == 19) return 20;
    if (lg <= 20) return msm_window(nbase);
    return lg - 2 < 20 ? lg - 2 : 20;
}
