// fixed.cuh — the per-thread bodies of the fixed-base products
// out_i = s_i·G for one base G and many scalars (a Groth16 setup's queries:
// keygen's G1 and G2 products). Their driver is driver.cuh's
// fixed_base_run, their kernels kernels.cuh's k_fb_*.
//
// The method is keygen's CPU comb, one scalar a thread: a table of every
// signed c-bit digit's multiple of every window's power of G,
//
//   table[w·2^(c−1) + d − 1] = d·2^(c·w)·G   (w < nw, 1 ≤ d ≤ 2^(c−1)),
//
// affine, built on the device (nw·2^(c−1) entries: 2^19 at c = 16, 32 MiB
// for BN254's G1), so a product is nw mixed additions (16 at c = 16) and no
// doublings. The sums are XYZZ; a second kernel makes them affine with one
// inversion for FB_INV_BATCH of them (Montgomery's trick), so the host gets
// gnark's affine points, (0, 0) for s_i = 0.
#pragma once

#include "msm.cuh"

// FB_INV_BATCH: the products one thread of k_fb_affine makes affine with
// one inversion (about 3 multiplications each instead of an inversion's
// ~300; more would only lengthen the thread's chain).
const u32 FB_INV_BATCH = 16;

// fixed_base_window: the window bits for n products over S, the c in
// [4, 16] with the least work, nw(c) mixed additions a product plus the
// table's nw(c)·2^(c−1) entries at about 40 additions each (a doubling
// chain of c and an inversion): 16 at 2^20 products and more.
template <class S> inline int fixed_base_window(size_t n) {
    int best = 4;
    double best_cost = 0;
    for (int c = 4; c <= 16; c++) {
        double nw = (double)msm_windows<S>(c);
        double cost = (double)n * nw + nw * (double)(1u << (c - 1)) * 40.0;
        if (c == 4 || cost < best_cost) best = c, best_cost = cost;
    }
    return best;
}

// fb_powers_body (one thread): pw[w] = 2^(c·w)·G for w < nw, XYZZ.
template <class F> HD void fb_powers_body(const Affine<F> *base, int c, int nw, XYZZ<F> *pw) {
    XYZZ<F> p = XYZZ<F>::inf();
    p.X = base->x;
    p.Y = base->y;
    p.ZZ = field_one<F>();
    p.ZZZ = field_one<F>();
    for (int w = 0; w < nw; w++) {
        pw[w] = p;
        for (int k = 0; k < c; k++) p.dbl_assign();
    }
}

// fb_table_body: entry i of the table, d·pw[w] in affine, w = i / 2^(c−1)
// and d = i mod 2^(c−1) + 1.
template <class F> HD void fb_table_body(size_t i, const XYZZ<F> *pw, int c, Affine<F> *table) {
    u32 half = 1u << (c - 1);
    XYZZ<F> p = pw[i >> (c - 1)];
    p.mul_small((u32)(i & (half - 1)) + 1);
    table[i] = p.to_affine();
}

// fb_mul_body: out[i] = scalars[i]·G (Montgomery form in, as gnark keeps
// Fr) over the table: window w's signed digit d adds ±table[w, |d|].
template <class F>
HD void fb_mul_body(size_t i, const ScalarOf<F> *scalars, const Affine<F> *table, int c, int nw, XYZZ<F> *out) {
    static_assert(ScalarOf<F>::N == 4, "bits_at reads four 64-bit limbs");
    ScalarOf<F> k = scalars[i].from_mont();
    const F one = field_one<F>();
    const size_t half = (size_t)1 << (c - 1);
    XYZZ<F> acc = XYZZ<F>::inf();
    u32 carry = 0;
    for (int w = 0; w < nw; w++) {
        u32 sign;
        u32 d = signed_digit(k, w, c, carry, sign);
        if (d == 0) continue;
        const Affine<F> &p = table[(size_t)w * half + d - 1];
        acc.add_affine(p.x, sign ? p.y.neg() : p.y, one);
    }
    out[i] = acc;
}

// fb_affine_body: thread t makes the m XYZZ points at t, t + g, t + 2g, …
// (g = ⌈m / FB_INV_BATCH⌉ threads: consecutive threads, consecutive
// points) affine with one inversion: out[j].x holds the running product of
// the points' ZZ·ZZZ until the backward pass overwrites it. Infinity
// (ZZ = 0) is (0, 0), as gnark reads it.
template <class F> HD void fb_affine_body(size_t t, const XYZZ<F> *in, size_t m, size_t g, Affine<F> *out) {
    const F one = field_one<F>();
    F acc = one;
    size_t last = t;
    for (size_t j = t; j < m; j += g) {
        if (!in[j].is_inf()) acc = acc * (in[j].ZZ * in[j].ZZZ);
        out[j].x = acc;
        last = j;
    }
    if (t >= m) return;
    F inv = acc.inv();
    for (size_t j = last;; j -= g) {
        const XYZZ<F> &p = in[j];
        if (p.is_inf()) {
            out[j].x = F::zero();
            out[j].y = F::zero();
        } else {
            F zz = p.ZZ * p.ZZZ;
            F before = j >= t + g ? out[j - g].x : one;
            F dinv = inv * before; // 1/(ZZ·ZZZ)
            inv = inv * zz;
            out[j].x = p.X * (dinv * p.ZZZ);
            out[j].y = p.Y * (dinv * p.ZZ);
        }
        if (j < t + g) break;
    }
}
