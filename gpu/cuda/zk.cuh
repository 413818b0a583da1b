// zk.cuh — BN254 arithmetic for zkpipe's CUDA backend: Montgomery fields
// Fr, Fp (4×64-bit limbs, the same layout and Montgomery form as
// gnark-crypto's fr.Element and fp.Element), Fp2, points in XYZZ coordinates,
// and the per-thread bodies of the MSM, batch-addition and NTT kernels.
//
// Everything here is host+device code, so that hosttest.cpp can check it with
// g++ on a machine with no GPU; zkpipe.cu wraps the bodies into kernels.
#pragma once

#include <stdint.h>
#include <stddef.h>

#ifdef __CUDACC__
#define HD __host__ __device__ __forceinline__
#else
#define HD inline
#endif

typedef uint64_t u64;
typedef uint32_t u32;

// mulwide returns the 128-bit product a·b as (lo, hi).
HD void mulwide(u64 a, u64 b, u64 &lo, u64 &hi) {
#ifdef __CUDA_ARCH__
    lo = a * b;
    hi = __umul64hi(a, b);
#else
    unsigned __int128 p = (unsigned __int128)a * b;
    lo = (u64)p;
    hi = (u64)(p >> 64);
#endif
}

// mac: (carry, t) ← t + a·b + carry.
HD void mac(u64 &t, u64 a, u64 b, u64 &carry) {
    u64 lo, hi;
    mulwide(a, b, lo, hi);
    lo += t;
    hi += (lo < t);
    lo += carry;
    hi += (lo < carry);
    t = lo;
    carry = hi;
}

// Field parameters: modulus limbs (little-endian) and −q⁻¹ mod 2⁶⁴.
struct FpParams {
    static constexpr u64 Q0 = 0x3c208c16d87cfd47ULL, Q1 = 0x97816a916871ca8dULL,
                         Q2 = 0xb85045b68181585dULL, Q3 = 0x30644e72e131a029ULL;
    static constexpr u64 INV = 0x87d20782e4866389ULL;
};
struct FrParams {
    static constexpr u64 Q0 = 0x43e1f593f0000001ULL, Q1 = 0x2833e84879b97091ULL,
                         Q2 = 0xb85045b68181585dULL, Q3 = 0x30644e72e131a029ULL;
    static constexpr u64 INV = 0xc2e1f593efffffffULL;
};

template <class P> struct Field {
    u64 v[4];

    HD static u64 q(int i) {
        return i == 0 ? (u64)P::Q0 : i == 1 ? (u64)P::Q1 : i == 2 ? (u64)P::Q2 : (u64)P::Q3;
    }

    HD static Field zero() {
        Field r;
        r.v[0] = r.v[1] = r.v[2] = r.v[3] = 0;
        return r;
    }
    HD bool is_zero() const { return (v[0] | v[1] | v[2] | v[3]) == 0; }
    HD bool eq(const Field &o) const {
        return ((v[0] ^ o.v[0]) | (v[1] ^ o.v[1]) | (v[2] ^ o.v[2]) | (v[3] ^ o.v[3])) == 0;
    }

    // reduce_once: x ← x − q if x ≥ q (x < 2q).
    HD void reduce_once() {
        u64 d[4], borrow = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            u64 qi = q(i);
            u64 t = v[i] - qi;
            u64 b1 = v[i] < qi;
            u64 t2 = t - borrow;
            u64 b2 = t < borrow;
            d[i] = t2;
            borrow = b1 | b2;
        }
        if (!borrow) {
#pragma unroll
            for (int i = 0; i < 4; i++) v[i] = d[i];
        }
    }

    HD friend Field operator+(const Field &a, const Field &b) {
        Field r;
        u64 carry = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            u64 s = a.v[i] + b.v[i];
            u64 c1 = s < a.v[i];
            u64 s2 = s + carry;
            u64 c2 = s2 < s;
            r.v[i] = s2;
            carry = c1 | c2;
        }
        // q < 2^254, so a + b < 2^255: no carry out of the top limb.
        r.reduce_once();
        return r;
    }

    HD friend Field operator-(const Field &a, const Field &b) {
        Field r;
        u64 borrow = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            u64 t = a.v[i] - b.v[i];
            u64 b1 = a.v[i] < b.v[i];
            u64 t2 = t - borrow;
            u64 b2 = t < borrow;
            r.v[i] = t2;
            borrow = b1 | b2;
        }
        if (borrow) {
            u64 carry = 0;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                u64 qi = q(i);
                u64 s = r.v[i] + qi;
                u64 c1 = s < qi;
                u64 s2 = s + carry;
                u64 c2 = s2 < s;
                r.v[i] = s2;
                carry = c1 | c2;
            }
        }
        return r;
    }

    HD Field neg() const {
        if (is_zero()) return *this;
        return zero() - *this;
    }

    HD Field dbl() const { return *this + *this; }

    // Montgomery product a·b·2⁻²⁵⁶ mod q: CIOS without the extra carry
    // words, valid because q's top limb is below 2⁶³ − 1 (gnark's "no-carry"
    // variant), then one conditional subtraction.
    HD friend Field operator*(const Field &a, const Field &b) {
        u64 t[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            u64 A = 0;
            mac(t[0], a.v[0], b.v[i], A);
            u64 m = t[0] * P::INV;
            u64 C = 0, d = t[0];
            mac(d, m, q(0), C);
#pragma unroll
            for (int j = 1; j < 4; j++) {
                mac(t[j], a.v[j], b.v[i], A);
                u64 x = t[j];
                mac(x, m, q(j), C);
                t[j - 1] = x;
            }
            t[3] = C + A;
        }
        Field r;
#pragma unroll
        for (int i = 0; i < 4; i++) r.v[i] = t[i];
        r.reduce_once();
        return r;
    }

    HD Field sqr() const { return *this * *this; }

    // from_mont: the canonical integer of a Montgomery-form element.
    HD Field from_mont() const {
        Field one;
        one.v[0] = 1;
        one.v[1] = one.v[2] = one.v[3] = 0;
        return *this * one;
    }
};

typedef Field<FpParams> Fp;
typedef Field<FrParams> Fr;

// Fp2 = Fp[u]/(u² + 1), gnark's E2 {A0, A1}.
struct Fp2 {
    Fp a0, a1;
    HD static Fp2 zero() {
        Fp2 r;
        r.a0 = Fp::zero();
        r.a1 = Fp::zero();
        return r;
    }
    HD bool is_zero() const { return a0.is_zero() && a1.is_zero(); }
    HD bool eq(const Fp2 &o) const { return a0.eq(o.a0) && a1.eq(o.a1); }
    HD friend Fp2 operator+(const Fp2 &a, const Fp2 &b) {
        Fp2 r;
        r.a0 = a.a0 + b.a0;
        r.a1 = a.a1 + b.a1;
        return r;
    }
    HD friend Fp2 operator-(const Fp2 &a, const Fp2 &b) {
        Fp2 r;
        r.a0 = a.a0 - b.a0;
        r.a1 = a.a1 - b.a1;
        return r;
    }
    HD Fp2 neg() const {
        Fp2 r;
        r.a0 = a0.neg();
        r.a1 = a1.neg();
        return r;
    }
    HD Fp2 dbl() const { return *this + *this; }
    HD friend Fp2 operator*(const Fp2 &a, const Fp2 &b) {
        Fp v0 = a.a0 * b.a0, v1 = a.a1 * b.a1;
        Fp s = (a.a0 + a.a1) * (b.a0 + b.a1);
        Fp2 r;
        r.a0 = v0 - v1;
        r.a1 = s - v0 - v1;
        return r;
    }
    HD Fp2 sqr() const {
        Fp2 r;
        Fp t = a0 * a1;
        r.a0 = (a0 + a1) * (a0 - a1);
        r.a1 = t + t;
        return r;
    }
};

// ─── points ─────────────────────────────────────────────────────────────────

// Affine point as gnark lays it out (X, Y in Montgomery form); (0, 0) is the
// point at infinity, as gnark's IsInfinity reads it.
template <class F> struct Affine {
    F x, y;
    HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

// XYZZ: x = X/ZZ, y = Y/ZZZ, ZZ³ = ZZZ²; ZZ = 0 is the point at infinity.
template <class F> struct XYZZ {
    F X, Y, ZZ, ZZZ;

    HD static XYZZ inf() {
        XYZZ r;
        r.X = F::zero();
        r.Y = F::zero();
        r.ZZ = F::zero();
        r.ZZZ = F::zero();
        return r;
    }
    HD bool is_inf() const { return ZZ.is_zero(); }

    HD XYZZ neg() const {
        XYZZ r = *this;
        r.Y = Y.neg();
        return r;
    }

    // dbl-2008-s-1 (a = 0).
    HD void dbl_assign() {
        if (is_inf()) return;
        F U = Y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = X * V;
        F X2 = X.sqr();
        F M = X2.dbl() + X2;
        F X3 = M.sqr() - S.dbl();
        Y = M * (S - X3) - W * Y;
        X = X3;
        ZZ = V * ZZ;
        ZZZ = W * ZZZ;
    }

    // set to 2·(x, y) for an affine point (mdbl-2008-s-1).
    HD void set_dbl_affine(const F &x, const F &y) {
        F U = y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = x * V;
        F x2 = x.sqr();
        F M = x2.dbl() + x2;
        X = M.sqr() - S.dbl();
        Y = M * (S - X) - W * y;
        ZZ = V;
        ZZZ = W;
    }

    // mixed addition with an affine point (madd-2008-s); (x, y) is not infinity.
    HD void add_affine(const F &x, const F &y, const F &one) {
        if (is_inf()) {
            X = x;
            Y = y;
            ZZ = one;
            ZZZ = one;
            return;
        }
        F P = x * ZZ - X;
        F R = y * ZZZ - Y;
        if (P.is_zero()) {
            if (R.is_zero()) {
                set_dbl_affine(x, y);
            } else {
                *this = inf();
            }
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = X * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - Y * PPP;
        X = X3;
        ZZ = ZZ * PP;
        ZZZ = ZZZ * PPP;
    }

    // add-2008-s.
    HD void add(const XYZZ &o) {
        if (o.is_inf()) return;
        if (is_inf()) {
            *this = o;
            return;
        }
        F U1 = X * o.ZZ;
        F U2 = o.X * ZZ;
        F S1 = Y * o.ZZZ;
        F S2 = o.Y * ZZZ;
        F P = U2 - U1;
        F R = S2 - S1;
        if (P.is_zero()) {
            if (R.is_zero()) {
                dbl_assign();
            } else {
                *this = inf();
            }
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = U1 * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - S1 * PPP;
        X = X3;
        ZZ = ZZ * o.ZZ * PP;
        ZZZ = ZZZ * o.ZZZ * PPP;
    }

    // mul_small: this ← k·this for a small integer k.
    HD void mul_small(u32 k) {
        XYZZ base = *this;
        XYZZ r = inf();
        for (int b = 31; b >= 0; b--) {
            r.dbl_assign();
            if ((k >> b) & 1) r.add(base);
        }
        *this = r;
    }
};

template <class F> HD F field_one();
template <> HD Fp field_one<Fp>() {
    // R mod p
    Fp r;
    r.v[0] = 0xd35d438dc58f0d9dULL;
    r.v[1] = 0x0a78eb28f5c70b3dULL;
    r.v[2] = 0x666ea36f7879462cULL;
    r.v[3] = 0x0e0a77c19a07df2fULL;
    return r;
}
template <> HD Fp2 field_one<Fp2>() {
    Fp2 r;
    r.a0 = field_one<Fp>();
    r.a1 = Fp::zero();
    return r;
}

// ─── MSM bodies ─────────────────────────────────────────────────────────────

// bits_at returns bits [s, s+c) of the 256-bit little-endian k (c ≤ 32).
HD u32 bits_at(const u64 k[4], int s, int c) {
    int limb = s >> 6, off = s & 63;
    if (limb >= 4) return 0;
    u64 v = k[limb] >> off;
    if (off + c > 64 && limb + 1 < 4) v |= k[limb + 1] << (64 - off);
    return (u32)(v & ((1ULL << c) - 1));
}

// digits_body: signed c-bit digits of scalar i (Montgomery form in), for
// every window w: key = w·2^(c−1) + |d| − 1, or the sentinel nw·2^(c−1) for
// d = 0; val = i | sign<<31. Written at [w·n + i].
HD void digits_body(size_t i, const Fr *scalars, size_t n, int c, int nw, u32 *keys, u32 *vals) {
    Fr k = scalars[i].from_mont();
    u32 half = 1u << (c - 1);
    u32 sentinel = (u32)nw * half;
    u32 carry = 0;
    for (int w = 0; w < nw; w++) {
        u32 d = bits_at(k.v, w * c, c) + carry;
        u32 sign = 0;
        if (d > half) {
            d = (1u << c) - d;
            sign = 1;
            carry = 1;
        } else {
            carry = 0;
        }
        size_t at = (size_t)w * n + i;
        keys[at] = d == 0 ? sentinel : (u32)w * half + d - 1;
        vals[at] = (u32)i | (sign << 31);
    }
}

// bounds_body marks, for sorted keys, where each bucket's run starts and ends.
HD void bounds_body(size_t i, const u32 *keys, size_t m, u32 nb, u32 *start, u32 *end) {
    u32 k = keys[i];
    if (k >= nb) return;
    if (i == 0 || keys[i - 1] != k) start[k] = (u32)i;
    if (i == m - 1 || keys[i + 1] != k) end[k] = (u32)i + 1;
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

// level0_body: chunk t of the sorted points: the sum of up to L signed bases
// of one bucket. start/cnt are the buckets' runs in the sorted array,
// off/chunks their chunks (exclusive scan).
template <class F>
HD void level0_body(u32 t, const Affine<F> *bases, const u32 *idx, const u32 *sorted_vals, const u32 *start,
                    const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb, u32 L, XYZZ<F> *out) {
    long b = find_seg(off, chunks, nb, t);
    if (b < 0) return;
    u32 j = t - off[b];
    u32 lo = start[b] + j * L;
    u32 hi = start[b] + cnt[b];
    if (hi - lo > L) hi = lo + L;
    F one = field_one<F>();
    XYZZ<F> acc = XYZZ<F>::inf();
    for (u32 p = lo; p < hi; p++) {
        u32 v = sorted_vals[p];
        u32 i = v & 0x7fffffffu;
        u32 bi = idx ? idx[i] : i;
        Affine<F> a = bases[bi];
        if (a.is_inf()) continue;
        F y = (v >> 31) ? a.y.neg() : a.y;
        acc.add_affine(a.x, y, one);
    }
    out[t] = acc;
}

// levelN_body: the same over points already summed (XYZZ).
template <class F>
HD void levelN_body(u32 t, const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks,
                    u32 nb, u32 L, XYZZ<F> *out) {
    long b = find_seg(off, chunks, nb, t);
    if (b < 0) return;
    u32 j = t - off[b];
    u32 lo = start[b] + j * L;
    u32 hi = start[b] + cnt[b];
    if (hi - lo > L) hi = lo + L;
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

// window count and size for an MSM of n points.
HD int msm_window(size_t n) {
    int lg = 0;
    while (lg < 40 && ((size_t)1 << (lg + 1)) <= n) lg++;
    int c = lg - 4;
    if (c < 4) c = 4;
    if (c > 16) c = 16;
    return c;
}
HD int msm_windows(int c) { return (255 + c - 1) / c; }

// ─── NTT bodies ─────────────────────────────────────────────────────────────

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
HD void dif_body(u32 t, Fr *x, u32 n, u32 m, const Fr *tw) {
    u32 blk = t / m, j = t % m;
    u32 i0 = blk * 2 * m + j, i1 = i0 + m;
    Fr u = x[i0], v = x[i1];
    x[i0] = u + v;
    x[i1] = (u - v) * tw[(size_t)j * (n / (2 * m))];
}
HD void dit_body(u32 t, Fr *x, u32 n, u32 m, const Fr *tw) {
    u32 blk = t / m, j = t % m;
    u32 i0 = blk * 2 * m + j, i1 = i0 + m;
    Fr u = x[i0], v = x[i1] * tw[(size_t)j * (n / (2 * m))];
    x[i0] = u + v;
    x[i1] = u - v;
}

// powers_body: out[i] = f·base^i.
HD void powers_body(size_t i, Fr base, Fr f, Fr *out) {
    Fr r = f, p = base;
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
HD void group_bfly(Fr *sh, u32 u, int tt, u32 r, u32 mlow, u32 n, const Fr *tw, bool dif) {
    u32 half = 1u << tt;
    u32 k0 = (u >> tt) * 2 * half + (u & (half - 1)), k1 = k0 + half;
    u32 m = mlow << tt;
    u32 j = r + (u & (half - 1)) * mlow;
    Fr w = tw[(size_t)j * (n / (2 * m))];
    Fr a = sh[k0], b = sh[k1];
    if (dif) {
        sh[k0] = a + b;
        sh[k1] = (a - b) * w;
    } else {
        b = b * w;
        sh[k0] = a + b;
        sh[k1] = a - b;
    }
}
