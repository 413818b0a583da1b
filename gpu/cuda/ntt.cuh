// ntt.cuh — the per-thread bodies of the NTT kernels over Fr: radix-2
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
