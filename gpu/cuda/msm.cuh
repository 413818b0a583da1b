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
HD u32 signed_digit(const Fr &k, int w, int c, u32 &carry, u32 &sign) {
    u32 half = 1u << (c - 1);
    u32 d = bits_at(k.v, w * c, c) + carry;
    sign = d > half;
    carry = sign;
    return sign ? (1u << c) - d : d;
}

HD void digits_body(size_t i, const Fr *scalars, const u32 *idx, size_t n, int c, int nw, u32 key0, u32 sentinel,
                    u32 *keys, u32 *vals) {
    Fr k = scalars[i].from_mont();
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
HD void digits_table_body(size_t i, const Fr *scalars, const u32 *idx, size_t n, size_t nbase, int c, int nw,
                          u32 key0, u32 sentinel, u32 *keys, u32 *vals) {
    Fr k = scalars[i].from_mont();
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

// level0_body: tile t of the m sorted (key, val) pairs, keys < nb a bucket's
// (the sentinel nb, digits of 0, sorts last): the sum of each bucket's
// signed bases in it, written where tiles_body's layout puts it (start, off:
// the buckets' runs and their first partial's slot). PF
// (ZKPIPE_MSM_PREFETCH, driver.cuh): the next pair and point are loaded
// before this point's addition, so that a random 64-byte read (from DRAM at
// 2^22 and up) runs under the arithmetic instead of before it.
template <class F> HD Affine<F> level0_point(const Affine<F> *bases, const u32 *idx, u32 v) {
    u32 i = v & 0x7fffffffu;
    return bases[idx ? idx[i] : i];
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
            level0_add(acc, level0_point(bases, idx, v), v, one);
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

// ─── batch-affine levels (ZKPIPE_MSM_AFFINE; driver.cuh, msm_core) ──────────
//
// The first levels can sum bucket points in affine coordinates instead:
// one level halves every bucket, pair j of bucket b being its points 2j and
// 2j+1 (an odd bucket's last point passes through). An affine addition is
// λ = (y₁ − y₀)/(x₁ − x₀), x₃ = λ² − x₀ − x₁, y₃ = λ(x₀ − x₃) − y₀: two
// products and a square once 1/(x₁ − x₀) is known, and Montgomery's trick
// gives every pair of a level its inverse for three products each and one
// inversion in all — 5 products and a square an addition against the mixed
// XYZZ addition's 8 and 2. The trick runs across the whole grid:
//
//   aff_fwd   lane g takes B pairs (items g_w·32·B + 32k + g_l, k < B, so a
//             warp's loads and stores are coalesced) and writes the running
//             product c_k of their x₁ − x₀ where the item's sum will go,
//             and the lane's total c_{B−1} to T[g]
//   batch_invert T (inv_fwd/inv_bwd below, recursively, one inversion)
//   aff_bwd   lane g walks its items back from T[g]⁻¹: 1/(x₁ − x₀) of item
//             k is t·c_{k−1}, then t ← t·(x₁ − x₀); the sum overwrites c_k
//
// Pairs the trick cannot take (a point at infinity, x₀ = x₁, or x = 0,
// which only infinity has in the bases zkpipe sees but is tested anyway)
// count 1 in the products and are summed by aff_add_slow with an inversion
// of their own. A level's item o is bucket b's item o − noff[b]; aff_fwd
// records b in the item's slot, beside c_k, for aff_bwd.

const u32 AFF_NONE = 0xffffffffu; // an item past the level's last

// AffSrc is a level's input: the sorted digits' bases (vals non-null:
// pts[val & 0x7fffffff], y negated where bit 31 is set) or the points of
// the level before (vals null).
template <class F> struct AffSrc {
    const Affine<F> *pts;
    const u32 *vals;
    HD F x_at(size_t i) const { return vals ? pts[vals[i] & 0x7fffffffu].x : pts[i].x; }
    HD Affine<F> at(size_t i) const {
        if (!vals) return pts[i];
        u32 v = vals[i];
        Affine<F> a = pts[v & 0x7fffffffu];
        if (v >> 31) a.y = a.y.neg();
        return a;
    }
};

// aff_special: a pair the batched inversion skips.
template <class F> HD bool aff_special(const F &x0, const F &x1) { return x0.is_zero() || x1.is_zero() || x0.eq(x1); }

// aff_add_slow: p + q in affine coordinates for any two points, with an
// inversion of its own (the pairs aff_special picks: rare).
template <class F> HD Affine<F> aff_add_slow(const Affine<F> &p, const Affine<F> &q) {
    if (p.is_inf()) return q;
    if (q.is_inf()) return p;
    F lambda;
    if (p.x.eq(q.x)) {
        if (!p.y.eq(q.y) || p.y.is_zero()) return Affine<F>{F::zero(), F::zero()}; // p = −q
        F x2 = p.x.sqr();
        lambda = (x2.dbl() + x2) * p.y.dbl().inv(); // 3x²/2y
    } else {
        lambda = (q.y - p.y) * (q.x - p.x).inv();
    }
    Affine<F> r;
    r.x = lambda.sqr() - p.x - q.x;
    r.y = lambda * (p.x - r.x) - p.y;
    return r;
}

// The item slot: c_k in x, the bucket in y's first limb, until aff_bwd
// writes the sum there.
template <class F> HD u32 aff_slot_bucket(const Affine<F> &a) { return *reinterpret_cast<const u32 *>(&a.y); }
template <class F> HD void aff_set_slot(Affine<F> &a, const F &c, u32 b) {
    a.x = c;
    *reinterpret_cast<u32 *>(&a.y) = b;
}

// aff_seg: the bucket of item o, walking on from the bucket of the lane's
// previous item (from; −1 for none): a few buckets ahead, then a binary
// search. aff_item: lane g's k-th item.
HD long aff_seg(const u32 *noff, const u32 *ncnt, u32 nb, u32 o, long from) {
    if (from >= 0) {
        for (int probe = 0; probe < 8 && (u32)from < nb; probe++, from++)
            if (o < noff[from] + ncnt[from]) return o >= noff[from] ? from : -1;
        if ((u32)from >= nb) return -1;
    }
    return find_seg(noff, ncnt, nb, o);
}
HD size_t aff_item(u32 g, u32 B, u32 k) { return ((size_t)(g >> 5) * B + k) * 32 + (g & 31); }

// aff_fwd_body: lane g's running products (see above). start/cnt: the
// input's bucket runs; noff/ncnt: the level's items a bucket.
template <class F>
HD void aff_fwd_body(u32 g, AffSrc<F> src, const u32 *start, const u32 *cnt, const u32 *noff, const u32 *ncnt,
                     u32 nb, size_t items, u32 B, Affine<F> *slots, F *T) {
    F c = field_one<F>();
    long b = -1;
    bool first = true;
    for (u32 k = 0; k < B; k++) {
        size_t o = aff_item(g, B, k);
        if (o >= items) break;
        b = aff_seg(noff, ncnt, nb, (u32)o, b);
        F d = field_one<F>();
        bool use = false;
        if (b >= 0) {
            u32 j = (u32)o - noff[b];
            size_t i0 = (size_t)start[b] + 2 * (size_t)j;
            if (2 * j + 1 < cnt[b]) {
                F x0 = src.x_at(i0), x1 = src.x_at(i0 + 1);
                if (!aff_special(x0, x1)) d = x1 - x0, use = true;
            }
        }
        if (use) c = first ? d : c * d, first = false;
        aff_set_slot(slots[o], c, b >= 0 ? (u32)b : AFF_NONE);
    }
    T[g] = c;
}

// aff_bwd_body: lane g's sums, from tinv = its total's inverse.
template <class F>
HD void aff_bwd_body(u32 g, AffSrc<F> src, const u32 *start, const u32 *cnt, const u32 *noff, size_t items, u32 B,
                     Affine<F> *slots, const F *Tinv) {
    F t = Tinv[g];
    u32 kmax = 0; // items of this lane
    while (kmax < B && aff_item(g, B, kmax) < items) kmax++;
    for (u32 k = kmax; k-- > 0;) {
        size_t o = aff_item(g, B, k);
        u32 b = aff_slot_bucket(slots[o]);
        if (b == AFF_NONE) continue;
        u32 j = (u32)o - noff[b];
        size_t i0 = (size_t)start[b] + 2 * (size_t)j;
        Affine<F> p = src.at(i0);
        if (2 * j + 1 >= cnt[b]) {
            slots[o] = p; // an odd bucket's last point
            continue;
        }
        Affine<F> q = src.at(i0 + 1);
        if (aff_special(p.x, q.x)) {
            slots[o] = aff_add_slow(p, q);
            continue;
        }
        F d = q.x - p.x;
        // 1/d = t·c_{k−1}: item k − 1's slot holds the running product
        // before this item (aff_fwd writes it at every item, one where no
        // earlier item took part); item 0's is t itself
        F inv = t;
        if (k > 0) {
            inv = t * slots[aff_item(g, B, k - 1)].x;
            t = t * d;
        }
        F lambda = (q.y - p.y) * inv;
        Affine<F> r;
        r.x = lambda.sqr() - p.x - q.x;
        r.y = lambda * (p.x - r.x) - p.y;
        slots[o] = r;
    }
}

// inv_fwd_body / inv_bwd_body: Montgomery's trick over X[j·BI, (j+1)·BI):
// prefix products into P and the chunk's product into Y[j]; then, with
// Y[j] inverted, every X[i] ← X[i]⁻¹. Every X[i] is nonzero (the lanes'
// totals are products of nonzero differences and ones).
template <class F> HD void inv_fwd_body(size_t j, const F *X, size_t n, u32 BI, F *P, F *Y) {
    size_t lo = j * BI, hi = lo + BI < n ? lo + BI : n;
    F c = X[lo];
    P[lo] = c;
    for (size_t i = lo + 1; i < hi; i++) {
        c = c * X[i];
        P[i] = c;
    }
    Y[j] = c;
}
template <class F> HD void inv_bwd_body(size_t j, F *X, size_t n, u32 BI, const F *P, const F *Y) {
    size_t lo = j * BI, hi = lo + BI < n ? lo + BI : n;
    F t = Y[j];
    for (size_t i = hi - 1; i > lo; i--) {
        F xi = X[i];
        X[i] = t * P[i - 1];
        t = t * xi;
    }
    X[lo] = t;
}

// levelA_body: chunk t of the affine points of the last affine level, summed
// into XYZZ (mixed additions), as levelN_body does over XYZZ.
template <class F>
HD void levelA_body(u32 t, const Affine<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks,
                    u32 nb, u32 L, XYZZ<F> *out) {
    u32 lo, hi;
    if (!chunk_at(t, start, cnt, off, chunks, nb, &lo, &hi)) return;
    const F one = field_one<F>();
    XYZZ<F> acc = XYZZ<F>::inf();
    for (u32 p = lo; p < hi; p++)
        if (!in[p].is_inf()) acc.add_affine(in[p].x, in[p].y, one);
    out[t] = acc;
}

// bucket: bucket b's sum once every bucket has at most one chunk.
template <class F> HD XYZZ<F> bucket_at(const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 b) {
    return cnt[b] ? P[start[b]] : XYZZ<F>::inf();
}

// segment_body: segment s of a window's buckets [lo, lo+S) (bucket q holds
// digit q+1): Σ (q+1)·B_q, by a running sum from the top.
template <class F>
HD void segment_body(u32 s, const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, XYZZ<F> *out) {
    u32 spw = half / S;
    u32 w = s / spw, j = s % spw;
    u32 lo = j * S;
    XYZZ<F> run = XYZZ<F>::inf(), acc = XYZZ<F>::inf();
    for (int q = (int)(lo + S) - 1; q >= (int)lo; q--) {
        run.add(bucket_at(P, start, cnt, w * half + (u32)q));
        acc.add(run);
    }
    if (lo) {
        run.mul_small(lo);
        acc.add(run);
    }
    out[s] = acc;
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
HD int msm_windows(int c) { return (255 + c - 1) / c; }

// msm_table_window: the window of a table over nbase bases. Over a table
// every window's digits share one set of 2^(c−1) buckets, so a wider window
// costs only those buckets' reduction (two additions a bucket) while it
// saves n additions a window it removes: past 2^20 bases, ⌊log₂n⌋ − 2 bits
// up to 20 (2^22 and up: 20 bits, 13 windows instead of 16). Runs 1–3 of
// notes/h200-2026-12-01d: 20 bits best or level at 2^22 and 2^24 (19 and
// 20 within the runs' spread at 2^22, 20 with less table memory); 21, 22
// and 24 lost to the reduction of their 2^20 or more buckets.
HD int msm_table_window(size_t nbase, int override = 0) {
    if (override >= 4 && override <= MSM_MAX_WINDOW) return override;
    int lg = 0;
    while (lg < 40 && ((size_t)1 << (lg + 1)) <= nbase) lg++;
    if (lg <= 20) return msm_window(nbase);
    return lg - 2 < 20 ? lg - 2 : 20;
}
