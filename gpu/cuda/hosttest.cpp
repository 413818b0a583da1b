// hosttest.cpp — checks zk.cuh's arithmetic and the MSM/NTT algorithm on the
// CPU, with g++, where there is no GPU: `make hosttest` (or
// g++ -O2 -std=c++17 hosttest.cpp -o hosttest && ./hosttest).
// test_msm below checks the bodies with a driver of its own (std::stable_sort
// for CUB's radix sort); the real driver (driver.cuh) runs in the host
// stand-in under the Go tests. test_plan checks driver.cuh's size and offset
// arithmetic at sizes too large to allocate here.
#include "abi.cuh" // zk_default_config
#include "driver.cuh"
#include "zk.cuh"
#include "curve_vectors.h" // gnark-crypto's points: testdata/curvevectors

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

static int failures = 0;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static std::mt19937_64 rng(42);

template <class F> F raw(u64 x) {
    F r = F::zero();
    r.v[0] = x;
    return r;
}
template <class F> F R() {
    F r = raw<F>(1);
    for (int i = 0; i < 256; i++) r = r.dbl();
    return r;
}
template <class F> F R2() {
    F r = R<F>();
    for (int i = 0; i < 256; i++) r = r.dbl();
    return r;
}
template <class F> F mont(u64 x) { return raw<F>(x) * R2<F>(); }
template <class F> F rnd() {
    F r;
    for (int i = 0; i < 4; i++) r.v[i] = rng();
    r.v[3] &= 0x0fffffffffffffffULL; // < 2^252 < q
    return r;
}
// pow by a 256-bit exponent (limbs).
template <class F> F pow(F b, const u64 e[4]) {
    F r = R<F>();
    for (int i = 255; i >= 0; i--) {
        r = r.sqr();
        if ((e[i / 64] >> (i % 64)) & 1) r = r * b;
    }
    return r;
}
template <class F> F inv(F a) {
    u64 e[4] = {F::q(0) - 2, F::q(1), F::q(2), F::q(3)};
    return pow(a, e);
}

typedef XYZZ<Fp> P1;
typedef Affine<Fp> A1;

A1 to_aff(const P1 &p) {
    A1 a;
    if (p.is_inf()) {
        a.x = Fp::zero();
        a.y = Fp::zero();
        return a;
    }
    a.x = p.X * inv(p.ZZ);
    a.y = p.Y * inv(p.ZZZ);
    return a;
}
bool on_curve(const A1 &a) { return a.y.sqr().eq(a.x.sqr() * a.x + mont<Fp>(3)); }
bool aeq(const A1 &a, const A1 &b) { return a.x.eq(b.x) && a.y.eq(b.y); }

P1 naive_mul(const A1 &a, const Fr &k_mont) {
    Fr k = k_mont.from_mont();
    P1 r = P1::inf();
    P1 base = P1::inf();
    base.add_affine(a.x, a.y, field_one<Fp>());
    for (int i = 255; i >= 0; i--) {
        r.dbl_assign();
        if ((k.v[i / 64] >> (i % 64)) & 1) r.add(base);
    }
    return r;
}

// reduce_emul mirrors driver.cuh's reduce_buckets over sets of half bucket
// sums (P through start, cnt): segments of S buckets, their bit classes in
// k_bitsum's parts, and both combines, the host's Horner (combine_bits) and
// the device's weighed sums (weigh_body), which must agree.
template <class F>
std::vector<XYZZ<F>> reduce_emul(const std::vector<XYZZ<F>> &P, const std::vector<u32> &start,
                                 const std::vector<u32> &cnt, u32 sets, u32 half, u32 S, u32 per_of = 0) {
    typedef XYZZ<F> Pt;
    u32 spw = half / S, nseg = sets * spw, K = bit_classes(spw);
    int lgS = 0;
    while ((1u << lgS) < S) lgS++;
    std::vector<Pt> acc(nseg), run(nseg);
    for (u32 s = 0; s < nseg; s++) segment_body(s, P.data(), start.data(), cnt.data(), half, S, acc.data(), run.data());
    u32 per = per_of ? per_of : bitsum_per(spw, K, sets), parts = spw / per; // per_of: a part's items to try
    std::vector<Pt> sums(sets * K, Pt::inf()), weighed(sets * K);
    for (u32 set = 0; set < sets; set++)
        for (u32 k = 0; k < K; k++)
            for (u32 part = 0; part < parts; part++) {
                u32 count = bit_class_count(k, spw), lo = part * per, hi = lo + per < count ? lo + per : count;
                Pt p = Pt::inf();
                for (u32 i = lo; i < hi; i++) p.add(bit_class_item(acc.data(), run.data(), spw, set, k, i));
                sums[set * K + k].add(p);
            }
    for (u32 t = 0; t < sets * K; t++) weigh_body(t, sums.data(), K, lgS, weighed.data());
    std::vector<Pt> out(sets);
    for (u32 set = 0; set < sets; set++) {
        out[set] = combine_bits(sums.data() + set * K, K, lgS);
        Pt dev = Pt::inf();
        for (u32 k = 0; k < K; k++) dev.add(weighed[set * K + k]);
        Affine<F> a = out[set].to_affine(), b = dev.to_affine();
        CHECK(a.x.eq(b.x) && a.y.eq(b.y), "reduce_emul: set %u: host and device combines differ (half %u, S %u)", set,
              half, S);
    }
    return out;
}

// msm_emul mirrors msm() in zkpipe.cu (driver.cuh's msm_core), over any
// group's base field F.
template <class F>
XYZZ<F> msm_emul(const std::vector<Affine<F>> &bases, const std::vector<ScalarOf<F>> &sc, const u32 *idx, u32 L) {
    typedef XYZZ<F> P1;
    size_t n = sc.size();
    int c = msm_window(n), nw = msm_windows<ScalarOf<F>>(c);
    u32 half = 1u << (c - 1), nb = (u32)nw * half;
    size_t m = n * nw;
    std::vector<u32> keys(m), vals(m);
    for (size_t i = 0; i < n; i++) digits_body(i, sc.data(), nullptr, n, c, nw, 0, nb, keys.data(), vals.data());
    std::vector<size_t> ord(m);
    for (size_t i = 0; i < m; i++) ord[i] = i;
    std::stable_sort(ord.begin(), ord.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    std::vector<u32> k2(m), v2(m);
    for (size_t i = 0; i < m; i++) k2[i] = keys[ord[i]], v2[i] = vals[ord[i]];
    std::vector<u32> start(nb), cnt(nb);
    for (u32 b = 0; b < nb; b++) runs_body(b, k2.data(), m, start.data(), cnt.data());
    u32 most = 0;
    for (u32 b = 0; b < nb; b++) {
        u32 e = 0; // the run's end, the slow way
        for (size_t i = 0; i < m; i++)
            if (k2[i] == b) e = (u32)i + 1;
        CHECK(!cnt[b] || e == start[b] + cnt[b], "bucket %u: run ends at %u, want %u", b, start[b] + cnt[b], e);
        most = cnt[b] > most ? cnt[b] : most;
    }
    // level 0: tiles of L sorted points
    std::vector<u32> chunks(nb), off(nb);
    for (u32 b = 0; b < nb; b++) tiles_body(b, start.data(), cnt.data(), L, chunks.data());
    u32 acc = 0;
    for (u32 b = 0; b < nb; b++) off[b] = acc, acc += chunks[b];
    size_t prev_total = m / L + nb;
    CHECK(acc <= prev_total, "tile bound %u > %zu", acc, prev_total);
    std::vector<P1> P(prev_total, P1::inf());
    for (u32 t = 0; t < (m + L - 1) / L; t++)
        level0_body(t, bases.data(), idx, k2.data(), v2.data(), m, nb, start.data(), off.data(), L, P.data());
    start = off;
    cnt = chunks;
    size_t bound = most > 1 ? (most - 2) / L + 2 : most;
    for (u32 b = 0; b < nb; b++) CHECK(cnt[b] <= bound, "bucket %u: %u partials, bound %zu", b, cnt[b], bound);
    while (bound > 1) {
        std::vector<u32> chunks(nb), off(nb);
        for (u32 b = 0; b < nb; b++) chunks_body(b, cnt.data(), L, chunks.data());
        u32 acc = 0;
        for (u32 b = 0; b < nb; b++) off[b] = acc, acc += chunks[b];
        size_t total = prev_total / L + nb;
        CHECK(acc <= total, "chunk bound %u > %zu", acc, total);
        std::vector<P1> Q(total, P1::inf());
        for (u32 t = 0; t < total; t++)
            levelN_body(t, P.data(), start.data(), cnt.data(), off.data(), chunks.data(), nb, L, Q.data());
        P = Q;
        start = off;
        cnt = chunks;
        prev_total = total;
        bound = (bound + L - 1) / L;
    }
    for (u32 b = 0; b < nb; b++) CHECK(cnt[b] <= 1, "bucket %u has %u parts", b, cnt[b]);
    std::vector<P1> win = reduce_emul(P, start, cnt, (u32)nw, half, half < 32 ? half : 32);
    P1 r = win[nw - 1];
    for (int w = nw - 2; w >= 0; w--) {
        for (int i = 0; i < c; i++) r.dbl_assign();
        r.add(win[w]);
    }
    return r;
}

Fr fr_rnd() {
    Fr r;
    for (int i = 0; i < 4; i++) r.v[i] = rng();
    r.v[3] &= 0x0fffffffffffffffULL;
    return r;
}

// test_limbs32: the 32-bit PTX chains (their host emulation, ptx.cuh)
// against the 64-bit reference, on edges (0, 1, q − 1, q − 2^k, limbs all
// ones below q's top) and random elements of every size up to q − 1.
template <class F> void test_limbs32(const char *name) {
    std::vector<F> xs;
    F top;
    for (int i = 0; i < 4; i++) top.v[i] = F::q(i);
    for (u64 d : {1ULL, 2ULL, 3ULL, 1ULL << 32, (1ULL << 63)}) {
        F t = top;
        t.v[0] -= d;
        if (d > top.v[0]) t.v[1] -= 1; // borrow (q's low limb is large for both)
        xs.push_back(t);
    }
    xs.push_back(F::zero());
    xs.push_back(raw<F>(1));
    xs.push_back(raw<F>(0xffffffffULL));
    xs.push_back(R<F>());
    {
        F t = F::zero();
        t.v[0] = t.v[1] = t.v[2] = ~0ULL;
        t.v[3] = F::q(3) - 1; // every low limb all ones
        xs.push_back(t);
    }
    for (int i = 0; i < 400; i++) {
        F r;
        for (int k = 0; k < 4; k++) r.v[k] = rng();
        r.v[3] %= F::q(3); // below q's top limb: any value < q
        xs.push_back(r);
    }
    for (size_t i = 0; i < xs.size(); i++) {
        for (size_t j = i; j < xs.size(); j += 1 + (i % 7)) {
            const F &x = xs[i], &y = xs[j];
            CHECK(F::mul32(x, y).eq(F::mul64(x, y)), "%s mul32 %zu,%zu", name, i, j);
            CHECK(F::add32(x, y).eq(F::add64(x, y)), "%s add32 %zu,%zu", name, i, j);
            CHECK(F::sub32(x, y).eq(F::sub64(x, y)), "%s sub32 %zu,%zu", name, i, j);
            CHECK(F::sub32(y, x).eq(F::sub64(y, x)), "%s sub32 %zu,%zu", name, j, i);
            CHECK(F::sqr32(x).eq(F::mul64(x, x)), "%s sqr32 %zu", name, i);
            const F &z = xs[(i * 31 + j) % xs.size()], &w = xs[(j * 17 + i + 1) % xs.size()];
            CHECK(F::dot32(x, y, z, w).eq(F::add64(F::mul64(x, y), F::mul64(z, w))), "%s dot32 %zu,%zu", name, i, j);
        }
    }
}

// ─── lazy reduction (field.cuh: mul_lazy, add_lazy2q, sub_lazy2q, reduce_2q) ──
//
// The references below share no code with field.cuh's chains: 32-bit limbs
// in 64-bit words, every carry kept.

// Big: a value as nine 32-bit limbs (one past 2^256, for a carry).
struct Big {
    u64 l[9];
};
template <class F> Big big_of(const F &x) {
    Big b{};
    for (int i = 0; i < 4; i++) b.l[2 * i] = (u32)x.v[i], b.l[2 * i + 1] = x.v[i] >> 32;
    return b;
}
template <class F> F field_of(const Big &b) {
    F r;
    for (int i = 0; i < 4; i++) r.v[i] = b.l[2 * i] | (b.l[2 * i + 1] << 32);
    return r;
}
Big big_add(const Big &a, const Big &b) {
    Big r{};
    u64 c = 0;
    for (int i = 0; i < 9; i++) {
        u64 t = a.l[i] + b.l[i] + c;
        r.l[i] = t & 0xffffffffULL;
        c = t >> 32;
    }
    return r;
}
// big_sub: a − b for a ≥ b.
Big big_sub(const Big &a, const Big &b) {
    Big r{};
    u64 br = 0;
    for (int i = 0; i < 9; i++) {
        u64 t = a.l[i] - b.l[i] - br;
        r.l[i] = t & 0xffffffffULL;
        br = (t >> 63) & 1;
    }
    return r;
}
int big_cmp(const Big &a, const Big &b) {
    for (int i = 8; i >= 0; i--)
        if (a.l[i] != b.l[i]) return a.l[i] < b.l[i] ? -1 : 1;
    return 0;
}
// big_q: k·q.
template <class F> Big big_q(int k) {
    F q;
    for (int i = 0; i < 4; i++) q.v[i] = F::q(i);
    Big b = big_of(q), r{};
    for (int i = 0; i < k; i++) r = big_add(r, b);
    return r;
}
// big_mod: x mod q for x < 4q.
template <class F> F big_mod(Big x) {
    for (int k = 3; k >= 1; k--)
        if (big_cmp(x, big_q<F>(k)) >= 0) {
            x = big_sub(x, big_q<F>(k));
            break;
        }
    return field_of<F>(x);
}
template <class F> F lazy_mod(const F &x) { return big_mod<F>(big_of(x)); }

// redc_ref: (a·b + M·q)/2^256 exactly, for the one M < 2^256 that makes
// it whole: the 512-bit product, then eight word-by-word reduction steps,
// each carry carried to the top. Montgomery's reduction is unique (M ≡
// −a·b·q⁻¹ mod 2^256), so mont32 must return exactly this.
template <class F> Big redc_ref(const F &a, const F &b) {
    Big x = big_of(a), y = big_of(b), qb = big_q<F>(1);
    u64 t[18] = {0};
    auto mac_row = [&](const Big &u, u64 v, int at) { // t += u·v·2^(32·at)
        u64 c = 0;
        for (int j = 0; j < 8; j++) {
            u64 p = u.l[j] * v; // 32 × 32 bits
            u64 s = (p & 0xffffffffULL) + t[at + j] + c;
            t[at + j] = s & 0xffffffffULL;
            c = (p >> 32) + (s >> 32);
        }
        for (int k = at + 8; c; k++) {
            u64 s = t[k] + c;
            t[k] = s & 0xffffffffULL;
            c = s >> 32;
        }
    };
    for (int i = 0; i < 8; i++) mac_row(x, y.l[i], i);
    // −q⁻¹ mod 2^32 by Newton's iteration from q's low limb (not P::INV)
    u32 q0 = (u32)qb.l[0], inv = q0;
    for (int i = 0; i < 5; i++) inv *= 2 - q0 * inv;
    u32 ninv = 0u - inv;
    for (int i = 0; i < 8; i++) {
        u32 m = (u32)t[i] * ninv;
        mac_row(qb, m, i);
        CHECK(t[i] == 0, "redc_ref: limb %d not cleared", i);
    }
    Big r{};
    for (int i = 0; i < 9; i++) r.l[i] = t[8 + i];
    CHECK(t[17] == 0, "redc_ref: past 2^288");
    return r;
}

// lazy_values: edges and random values in [0, 2q) (in [0, 4q) with four):
// 0, 1, q − 1, q, q + 1, 2q − 1 and their neighbours, limbs all ones below
// 2q's top (64- and 32-bit), the largest top limb with any lower ones, and
// random values of every size.
template <class F> std::vector<F> lazy_values(int k, int nrand) {
    Big kq = big_q<F>(k), one{}, q = big_q<F>(1);
    one.l[0] = 1;
    std::vector<Big> bs;
    Big zero{};
    bs.push_back(zero);
    bs.push_back(one);
    for (int j = 1; j <= k; j++) {
        Big jq = big_q<F>(j);
        bs.push_back(big_sub(jq, one));
        if (j < k) bs.push_back(jq), bs.push_back(big_add(jq, one));
        Big d{};
        d.l[1] = 1;
        bs.push_back(big_sub(jq, d)); // j·q − 2^32
    }
    {
        Big two{};
        two.l[0] = 2;
        bs.push_back(big_sub(kq, two));
    }
    F top = field_of<F>(kq); // its top 64-bit limb less one, every lower limb all ones
    for (int lim : {64, 32}) {
        F t;
        for (int i = 0; i < 4; i++) t.v[i] = ~0ULL;
        if (lim == 64)
            t.v[3] = top.v[3] - 1;
        else
            t.v[3] = ((top.v[3] >> 32) - 1) << 32 | 0xffffffffULL;
        bs.push_back(big_of(t));
    }
    for (int i = 0; i < 8; i++) { // a single 32-bit limb all ones, or all but one
        Big b{}, c = big_sub(kq, one);
        b.l[i] = 0xffffffffULL;
        if (big_cmp(b, kq) < 0) bs.push_back(b);
        c.l[i] = 0;
        bs.push_back(c);
    }
    {
        Big r = big_of(R<F>()); // R mod q, and it plus q
        bs.push_back(r);
        if (k > 1) bs.push_back(big_add(r, q));
    }
    std::vector<F> xs;
    for (const Big &b : bs) {
        CHECK(big_cmp(b, kq) < 0, "lazy_values: an edge not below %dq", k);
        xs.push_back(field_of<F>(b));
    }
    for (int i = 0; i < nrand; i++) {
        F r;
        for (int j = 0; j < 4; j++) r.v[j] = rng();
        int bits = (int)(rng() % 256) + 1; // every size
        for (int j = 0; j < 4; j++) {
            int lo = 64 * j;
            if (bits <= lo) r.v[j] = 0;
            else if (bits < lo + 64) r.v[j] &= (1ULL << (bits - lo)) - 1;
        }
        if (i % 3 == 0) r.v[3] = top.v[3] - 1 - (rng() % 4); // the largest top limbs
        if (big_cmp(big_of(r), kq) >= 0) r.v[3] %= top.v[3]; // then below k·q
        xs.push_back(r);
    }
    return xs;
}

template <class F> bool below(const F &x, int k) { return big_cmp(big_of(x), big_q<F>(k)) < 0; }

// test_lazy: each lazy primitive on pairs of values in [0, 2q): exact
// against the references, congruent to the canonical operation, and in
// range. Mutation check: drop a carry in mont32's chains (reduce_step's
// addc(odd[7], 0), redc_row's) and this fails.
// test_lazy_add_sub: add_lazy2q, sub_lazy2q (both orders) and reduce_2q on
// pairs of xs (values in [0, 2q)): exact against the references, in range,
// congruent to the canonical operations. Returns how many of the sums
// passed 2^256 (only possible without HEADROOM_4Q).
template <class F> size_t test_lazy_add_sub(const char *name, const std::vector<F> &xs) {
    Big q2 = big_q<F>(2), r{};
    r.l[8] = 1; // R = 2^256
    size_t past_r = 0;
    for (size_t i = 0; i < xs.size(); i++) {
        for (size_t j = i % 5; j < xs.size(); j += 1 + (i % 5)) {
            const F &a = xs[i], &b = xs[j];
            F ar = lazy_mod(a), br = lazy_mod(b);
            Big s = big_add(big_of(a), big_of(b));
            if (big_cmp(s, r) >= 0) past_r++;
            if (big_cmp(s, q2) >= 0) s = big_sub(s, q2);
            F ad = F::add_lazy2q(a, b);
            CHECK(big_cmp(big_of(ad), s) == 0 && s.l[8] == 0, "%s add_lazy2q %zu,%zu", name, i, j);
            CHECK(below(ad, 2) && lazy_mod(ad).eq(F::add64(ar, br)), "%s add_lazy2q %zu,%zu: range or value", name, i, j);
            for (int o = 0; o < 2; o++) {
                const F &u = o ? b : a, &v = o ? a : b;
                Big d = big_cmp(big_of(u), big_of(v)) >= 0 ? big_sub(big_of(u), big_of(v)) : big_sub(big_add(big_of(u), q2), big_of(v));
                F sb = F::sub_lazy2q(u, v);
                CHECK(big_cmp(big_of(sb), d) == 0, "%s sub_lazy2q %zu,%zu (%d)", name, i, j, o);
                CHECK(below(sb, 2) && lazy_mod(sb).eq(F::sub64(lazy_mod(u), lazy_mod(v))), "%s sub_lazy2q %zu,%zu (%d): range or value", name, i, j, o);
            }
        }
        F rd = F::reduce_2q(xs[i]);
        CHECK(below(rd, 1) && rd.eq(lazy_mod(xs[i])), "%s reduce_2q %zu", name, i);
    }
    return past_r;
}

template <class F> void test_lazy(const char *name) {
    std::vector<F> xs = lazy_values<F>(2, 400);
    for (size_t i = 0; i < xs.size(); i++) {
        for (size_t j = i % 5; j < xs.size(); j += 1 + (i % 5)) {
            const F &a = xs[i], &b = xs[j];
            F ar = lazy_mod(a), br = lazy_mod(b);
            F m = F::mul_lazy(a, b);
            CHECK(big_cmp(big_of(m), redc_ref(a, b)) == 0, "%s mul_lazy %zu,%zu: not the exact reduction", name, i, j);
            CHECK(below(m, 2), "%s mul_lazy %zu,%zu: not below 2q", name, i, j);
            CHECK(lazy_mod(m).eq(F::mul64(ar, br)), "%s mul_lazy %zu,%zu: not a·b mod q", name, i, j);
            F mc = F::mul32(a, b); // canonical from lazy inputs
            CHECK(mc.eq(F::mul64(ar, br)), "%s mul32 of lazy %zu,%zu", name, i, j);
        }
    }
    test_lazy_add_sub(name, xs);
    // the carry chains past what the NTT needs: a < 4q, b < q (a·b < q·R, so
    // still below 2q), and a, b < 4q (exact; the bound is then 5q)
    std::vector<F> ys = lazy_values<F>(4, 200), zs = lazy_values<F>(1, 100);
    for (size_t i = 0; i < ys.size(); i++)
        for (size_t j = i % 3; j < zs.size(); j += 1 + (i % 3)) {
            F m = F::mul_lazy(ys[i], zs[j]);
            CHECK(big_cmp(big_of(m), redc_ref(ys[i], zs[j])) == 0 && below(m, 2), "%s mul_lazy 4q×q %zu,%zu", name, i, j);
            m = F::mul_lazy(zs[j], ys[i]);
            CHECK(big_cmp(big_of(m), redc_ref(zs[j], ys[i])) == 0 && below(m, 2), "%s mul_lazy q×4q %zu,%zu", name, j, i);
        }
    for (size_t i = 0; i < ys.size(); i += 3)
        for (size_t j = 0; j < ys.size(); j += 5) {
            Big want = redc_ref(ys[i], ys[j]);
            CHECK(big_cmp(big_of(F::mul_lazy(ys[i], ys[j])), want) == 0 && want.l[8] == 0, "%s mul_lazy 4q×4q %zu,%zu", name, i, j);
        }
}

// test_lazy_by: the lazy primitives of a field with only 2q < R (LAZY_BY_OK:
// BLS12-381's Fr; BN254's fields take the same calls) on a in [0, 2q) and a
// canonical c: mul_lazy_by and mul32_by exact against redc_ref (c·a's
// reduction: M depends on the product alone), below 2q and canonical;
// and, without HEADROOM_4Q, test_lazy_add_sub with sums past 2^256
// (BLS12-381's Fr: 2q > 2^255). Mutation check: add_lazy2q without its carry
// out, or mul_lazy_by with a as mont32's multiplicand, fails it.
template <class F> void test_lazy_by(const char *name) {
    std::vector<F> xs = lazy_values<F>(2, 400), cs = lazy_values<F>(1, 100);
    for (size_t i = 0; i < xs.size(); i++) {
        const F &a = xs[i];
        F ar = lazy_mod(a);
        for (size_t j = i % 3; j < cs.size(); j += 1 + (i % 3)) {
            const F &c = cs[j];
            F m = F::mul_lazy_by(a, c);
            CHECK(big_cmp(big_of(m), redc_ref(c, a)) == 0, "%s mul_lazy_by %zu,%zu: not the exact reduction", name, i, j);
            CHECK(below(m, 2) && lazy_mod(m).eq(F::mul64(ar, c)), "%s mul_lazy_by %zu,%zu: range or value", name, i, j);
            CHECK(F::mul32_by(a, c).eq(F::mul64(ar, c)), "%s mul32_by %zu,%zu", name, i, j);
        }
    }
    if constexpr (!F::HEADROOM_4Q) { // (test_lazy checks the others' sums)
        // sums past 2^256 must have been tried
        CHECK(test_lazy_add_sub(name, xs) > 0, "%s: no sum of two lazy values passed 2^256", name);
    }
}

void test_field() {
    test_lazy_by<Bls12381Fr>("bls12-381 fr");
    test_lazy_by<Fr>("fr");
    test_limbs32<Fp>("fp");
    test_limbs32<Fr>("fr");
    test_lazy<Fp>("fp");
    test_lazy<Fr>("fr");
    Fp a = mont<Fp>(3), b = mont<Fp>(5);
    CHECK((a * b).eq(mont<Fp>(15)), "3*5");
    CHECK((a * b).from_mont().eq(raw<Fp>(15)), "from_mont");
    CHECK(R<Fp>().eq(field_one<Fp>()), "one constant");
    {
        Fp m1 = R<Fp>().neg();
        CHECK((m1 * m1).eq(R<Fp>()), "(-1)^2");
        Fp top;
        for (int i = 0; i < 4; i++) top.v[i] = Fp::q(i);
        top.v[0] -= 1; // q − 1, the largest element
        CHECK((top * top).eq(raw<Fp>(1) * raw<Fp>(1)), "(q-1)^2");
        Fr tr;
        for (int i = 0; i < 4; i++) tr.v[i] = Fr::q(i);
        tr.v[0] -= 1;
        CHECK((tr * tr).eq(raw<Fr>(1) * raw<Fr>(1)), "fr (q-1)^2");
        CHECK((tr * raw<Fr>(1)).eq((raw<Fr>(1) * raw<Fr>(1)).neg() * R<Fr>() * raw<Fr>(1) * R2<Fr>()), "fr (q-1)*1");
    }
    for (int i = 0; i < 100; i++) {
        Fp x = rnd<Fp>(), y = rnd<Fp>();
        CHECK(((x + y) - y).eq(x), "add/sub");
        CHECK((x - x).is_zero(), "x-x");
        CHECK((x + x.neg()).is_zero(), "neg");
        CHECK((x * inv(x)).eq(R<Fp>()), "inv");
        CHECK(x.inv().eq(inv(x)), "Field::inv");
        CHECK(((x + y) * (x - y)).eq(x.sqr() - y.sqr()), "square identity");
        Fr u = fr_rnd(), v = fr_rnd();
        CHECK((u * v).eq(v * u), "fr comm");
        CHECK(((u * v) * inv(v)).eq(u), "fr inv");
    }
    // Fp2: (a+bu)(a−bu) = a² + b²
    for (int i = 0; i < 20; i++) {
        Fp2 x, y;
        x.a0 = rnd<Fp>();
        x.a1 = rnd<Fp>();
        y.a0 = x.a0;
        y.a1 = x.a1.neg();
        Fp2 p = x * y;
        CHECK(p.a0.eq(x.a0.sqr() + x.a1.sqr()) && p.a1.is_zero(), "fp2 conj");
        Fp2 z;
        z.a0 = rnd<Fp>();
        z.a1 = rnd<Fp>();
        CHECK((x.sqr()).eq(x * x), "fp2 sqr");
        CHECK(Fp2::mul_dot(x, z).eq(Fp2::mul_karatsuba(x, z)), "fp2 dot vs karatsuba");
        CHECK(((x + z) * y).eq(x * y + z * y), "fp2 distrib");
    }
}

// ─── every field by its parameters, against a schoolbook reference ─────────
//
// Nat: a natural number as little-endian 32-bit limbs, with schoolbook
// multiplication and a bit-by-bit remainder: nothing of field.cuh's (no
// Montgomery, no INV, no chains), so it checks each parameter struct's
// constants too. A Montgomery result z of x·y is right when z·R ≡ x·y
// (mod q): both sides reduce with nat_mod, R = 2^(64·LIMBS) a shift.
typedef std::vector<u32> Nat;
void nat_trim(Nat &a) {
    while (!a.empty() && a.back() == 0) a.pop_back();
}
template <class F> Nat nat_of(const F &x) {
    Nat a;
    for (int i = 0; i < F::N; i++) a.push_back((u32)x.v[i]), a.push_back((u32)(x.v[i] >> 32));
    nat_trim(a);
    return a;
}
Nat nat_limbs(const u64 *v, int n) {
    Nat a;
    for (int i = 0; i < n; i++) a.push_back((u32)v[i]), a.push_back((u32)(v[i] >> 32));
    nat_trim(a);
    return a;
}
template <class F> F field_of_nat(const Nat &a) {
    F r = F::zero();
    for (size_t i = 0; i < a.size(); i++) {
        CHECK(i < 2 * F::N, "field_of_nat: too long");
        if (i < 2 * F::N) r.v[i / 2] |= (u64)a[i] << (32 * (i % 2));
    }
    return r;
}
int nat_cmp(const Nat &a, const Nat &b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    for (size_t i = a.size(); i-- > 0;)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}
Nat nat_add(const Nat &a, const Nat &b) {
    Nat r(std::max(a.size(), b.size()) + 1, 0);
    u64 c = 0;
    for (size_t i = 0; i < r.size(); i++) {
        u64 t = c + (i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0);
        r[i] = (u32)t;
        c = t >> 32;
    }
    nat_trim(r);
    return r;
}
Nat nat_sub(const Nat &a, const Nat &b) { // a ≥ b
    Nat r(a.size(), 0);
    u64 br = 0;
    for (size_t i = 0; i < a.size(); i++) {
        u64 t = (u64)a[i] - (i < b.size() ? b[i] : 0) - br;
        r[i] = (u32)t;
        br = (t >> 63) & 1;
    }
    nat_trim(r);
    return r;
}
Nat nat_mul(const Nat &a, const Nat &b) {
    Nat r(a.size() + b.size() + 1, 0);
    for (size_t i = 0; i < a.size(); i++) {
        u64 c = 0;
        for (size_t j = 0; j < b.size(); j++) {
            u64 t = (u64)a[i] * b[j] + r[i + j] + c;
            r[i + j] = (u32)t;
            c = t >> 32;
        }
        for (size_t k = i + b.size(); c; k++) {
            u64 t = (u64)r[k] + c;
            r[k] = (u32)t;
            c = t >> 32;
        }
    }
    nat_trim(r);
    return r;
}
Nat nat_shl(const Nat &a, int limbs32) {
    if (a.empty()) return a;
    Nat r(limbs32, 0);
    r.insert(r.end(), a.begin(), a.end());
    return r;
}
// nat_mod: a mod m, one bit at a time from a's top (r < m throughout).
Nat nat_mod(const Nat &a, const Nat &m) {
    Nat r;
    for (size_t i = a.size() * 32; i-- > 0;) {
        r = nat_add(r, r);
        if ((a[i / 32] >> (i % 32)) & 1) r = nat_add(r, Nat{1});
        if (nat_cmp(r, m) >= 0) r = nat_sub(r, m);
    }
    return r;
}
Nat nat_bit(int k) { // 2^k
    Nat r(k / 32 + 1, 0);
    r[k / 32] = 1u << (k % 32);
    return r;
}

template <class F> struct FieldRef {
    Nat q = nat_limbs(F::qs(), F::N);
    int R32 = 2 * F::N; // R = 2^(32·R32)
    Nat mod(const Nat &a) const { return nat_mod(a, q); }
    // is_mont_product: z·R ≡ x·y (mod q), and z canonical.
    bool is_mont_product(const F &z, const Nat &x, const Nat &y) const {
        return nat_cmp(nat_of(z), q) < 0 && nat_cmp(mod(nat_shl(nat_of(z), R32)), mod(nat_mul(x, y))) == 0;
    }
};

// param_values: canonical edges and random elements: 0, 1, 2, q − 1, q − 2,
// q − 2^32, q − 2^63, R mod q, the largest values with q's top limb less
// one (64- and 32-bit) and every lower limb all ones, values near 2^(bits−1)
// (q's top bit), and random elements of every bit size.
template <class F> std::vector<F> param_values(int nrand) {
    FieldRef<F> ref;
    const Nat &q = ref.q;
    std::vector<Nat> ns = {Nat{}, Nat{1}, Nat{2}};
    for (int k : {0, 1, 32, 63}) ns.push_back(nat_sub(q, k ? nat_bit(k) : Nat{1}));
    ns.push_back(nat_sub(q, Nat{2}));
    ns.push_back(ref.mod(nat_bit(64 * F::N)));
    Nat top = nat_bit(F::BITS - 1);
    ns.push_back(top);
    ns.push_back(nat_add(top, Nat{1}));
    ns.push_back(nat_sub(top, Nat{1}));
    for (int lim : {64, 32}) {
        F t;
        for (int i = 0; i < F::N; i++) t.v[i] = ~0ULL;
        t.v[F::N - 1] = lim == 64 ? F::TOP - 1 : ((F::TOP >> 32) - 1) << 32 | 0xffffffffULL;
        ns.push_back(nat_of(t));
    }
    std::vector<F> xs;
    for (const Nat &n : ns) {
        CHECK(nat_cmp(n, q) < 0, "param_values: an edge not below q");
        xs.push_back(field_of_nat<F>(n));
    }
    for (int i = 0; i < nrand; i++) {
        F r;
        for (int j = 0; j < F::N; j++) r.v[j] = rng();
        int bits = 1 + (int)(rng() % F::BITS);
        for (int j = 0; j < F::N; j++) {
            int lo = 64 * j;
            if (bits <= lo) r.v[j] = 0;
            else if (bits < lo + 64) r.v[j] &= (1ULL << (bits - lo)) - 1;
        }
        if (nat_cmp(nat_of(r), q) >= 0) r.v[F::N - 1] %= F::TOP;
        xs.push_back(r);
    }
    return xs;
}

// test_params: one field's constants and every operation on both products
// (mul32 and mul64 whatever ZK_FIELD_MUL is; the operators as built), and
// the lazy ones where the field has the headroom for them.
template <class F> void test_params(const char *name, bool want_4q, bool want_dot) {
    FieldRef<F> ref;
    const Nat &q = ref.q;
    CHECK(F::HEADROOM_4Q == want_4q && F::DOT32_OK == want_dot, "%s headroom facts", name);
    CHECK((int)(q.size() * 32 - __builtin_clz(q.back())) == F::BITS, "%s BITS", name);
    CHECK((u64)(F::q(0) * F::INV) == ~0ULL, "%s INV: q·INV ≢ −1 mod 2^64", name);
    Nat R = ref.mod(nat_bit(64 * F::N)), R2 = ref.mod(nat_mul(R, R));
    CHECK(nat_cmp(nat_of(F::one()), R) == 0, "%s ONE is not R mod q", name);
    CHECK(nat_cmp(nat_limbs(F::r2s(), F::N), R2) == 0, "%s R2 is not R² mod q", name);
    std::vector<F> xs = param_values<F>(150);
    for (size_t i = 0; i < xs.size(); i++) {
        const F &x = xs[i];
        Nat xn = nat_of(x);
        CHECK(ref.is_mont_product(F::sqr32(x), xn, xn), "%s sqr32 %zu", name, i);
        CHECK(ref.is_mont_product(x.sqr(), xn, xn), "%s sqr %zu", name, i);
        CHECK(nat_cmp(nat_add(nat_of(x.neg()), xn), x.is_zero() ? Nat{} : q) == 0, "%s neg %zu", name, i);
        F xi = x.inv(); // x̃·x̃⁻¹ = R² (Montgomery forms xR and x⁻¹R); 0 for 0
        CHECK(x.is_zero() ? xi.is_zero() : nat_cmp(ref.mod(nat_mul(xn, nat_of(xi))), R2) == 0, "%s inv %zu", name, i);
        CHECK(nat_cmp(ref.mod(nat_shl(nat_of(x.from_mont()), ref.R32)), xn) == 0, "%s from_mont %zu", name, i);
        for (size_t j = i % 3; j < xs.size(); j += 1 + (i % 4)) {
            const F &y = xs[j];
            Nat yn = nat_of(y);
            CHECK(ref.is_mont_product(F::mul32(x, y), xn, yn), "%s mul32 %zu,%zu", name, i, j);
            CHECK(ref.is_mont_product(F::mul64(x, y), xn, yn), "%s mul64 %zu,%zu", name, i, j);
            CHECK(ref.is_mont_product(x * y, xn, yn), "%s operator* %zu,%zu", name, i, j);
            Nat s = nat_add(xn, yn);
            if (nat_cmp(s, q) >= 0) s = nat_sub(s, q);
            Nat d = nat_cmp(xn, yn) >= 0 ? nat_sub(xn, yn) : nat_sub(nat_add(xn, q), yn);
            CHECK(nat_cmp(nat_of(F::add32(x, y)), s) == 0 && nat_cmp(nat_of(F::add64(x, y)), s) == 0 &&
                      nat_cmp(nat_of(x + y), s) == 0,
                  "%s add %zu,%zu", name, i, j);
            CHECK(nat_cmp(nat_of(F::sub32(x, y)), d) == 0 && nat_cmp(nat_of(F::sub64(x, y)), d) == 0 &&
                      nat_cmp(nat_of(x - y), d) == 0,
                  "%s sub %zu,%zu", name, i, j);
            if constexpr (F::DOT32_OK) {
                const F &z = xs[(i * 31 + j) % xs.size()], &w = xs[(j * 17 + i + 1) % xs.size()];
                Nat want = ref.mod(nat_add(nat_mul(xn, yn), nat_mul(nat_of(z), nat_of(w))));
                F got = F::dot32(x, y, z, w);
                CHECK(nat_cmp(nat_of(got), q) < 0 && nat_cmp(ref.mod(nat_shl(nat_of(got), ref.R32)), want) == 0,
                      "%s dot32 %zu,%zu", name, i, j);
            }
        }
    }
    if constexpr (F::HEADROOM_4Q) {
        // lazy values: [0, 2q): canonical ones and each plus q
        std::vector<F> ls;
        for (size_t i = 0; i < xs.size(); i += 2) {
            ls.push_back(xs[i]);
            ls.push_back(field_of_nat<F>(nat_add(nat_of(xs[i]), q)));
        }
        Nat q2 = nat_add(q, q);
        for (size_t i = 0; i < ls.size(); i++) {
            const F &a = ls[i];
            Nat an = nat_of(a);
            F r = F::reduce_2q(a);
            CHECK(nat_cmp(nat_of(r), ref.mod(an)) == 0, "%s reduce_2q %zu", name, i);
            for (size_t j = i % 5; j < ls.size(); j += 1 + (i % 5)) {
                const F &b = ls[j];
                Nat bn = nat_of(b);
                F m = F::mul_lazy(a, b);
                CHECK(nat_cmp(nat_of(m), q2) < 0 &&
                          nat_cmp(ref.mod(nat_shl(nat_of(m), ref.R32)), ref.mod(nat_mul(an, bn))) == 0,
                      "%s mul_lazy %zu,%zu", name, i, j);
                CHECK(ref.is_mont_product(F::mul32(a, b), an, bn), "%s mul32 of lazy %zu,%zu", name, i, j);
                Nat s = nat_add(an, bn);
                if (nat_cmp(s, q2) >= 0) s = nat_sub(s, q2);
                CHECK(nat_cmp(nat_of(F::add_lazy2q(a, b)), s) == 0, "%s add_lazy2q %zu,%zu", name, i, j);
                Nat d = nat_cmp(an, bn) >= 0 ? nat_sub(an, bn) : nat_sub(nat_add(an, q2), bn);
                CHECK(nat_cmp(nat_of(F::sub_lazy2q(a, b)), d) == 0, "%s sub_lazy2q %zu,%zu", name, i, j);
            }
        }
    }
}

// test_fp2_over: Fp2T<F>'s product (as built, and both forms where F has
// dot32), square and inverse, by identities over F checked above.
template <class F> void test_fp2_over(const char *name) {
    typedef Fp2T<F> E;
    std::vector<F> xs = param_values<F>(40);
    for (size_t i = 0; i + 3 < xs.size(); i++) {
        E x, y, z;
        x.a0 = xs[i], x.a1 = xs[i + 1], z.a0 = xs[i + 2], z.a1 = xs[i + 3];
        y.a0 = x.a0, y.a1 = x.a1.neg();
        E p = x * y; // (a + bu)(a − bu) = a² + b²
        CHECK(p.a0.eq(x.a0.sqr() + x.a1.sqr()) && p.a1.is_zero(), "%s fp2 conj %zu", name, i);
        E k = E::mul_karatsuba(x, z); // schoolbook: (a0b0 − a1b1) + (a0b1 + a1b0)u
        CHECK(k.a0.eq(x.a0 * z.a0 - x.a1 * z.a1) && k.a1.eq(x.a0 * z.a1 + x.a1 * z.a0), "%s fp2 karatsuba %zu", name,
              i);
        if constexpr (F::DOT32_OK) CHECK(E::mul_dot(x, z).eq(k), "%s fp2 dot vs karatsuba %zu", name, i);
        CHECK((x * z).eq(k) && x.sqr().eq(x * x), "%s fp2 mul/sqr %zu", name, i);
        E one = E::zero();
        one.a0 = F::one();
        CHECK(x.is_zero() || (x * x.inv()).eq(one), "%s fp2 inv %zu", name, i);
    }
}

// test_sqr: every square of field.cuh (sqr32 as built, sqr32_8 where N32 =
// 8, sqr32_n_raw for every field, N32 = 8 too, and sqr_lazy where the field
// has HEADROOM_4Q) against mul32(x, x) and the schoolbook reference, on
// 0, 1, 2^k for every k below q's bit length, q − 2^k, q − 1 … q − 5,
// values with every limb all ones under q's top limb, and random ones; the
// lazy square also on each of those plus q (so up to 2q − 1).
template <class F> void test_sqr(const char *name) {
    FieldRef<F> ref;
    const Nat &q = ref.q;
    std::vector<F> xs = param_values<F>(400);
    for (int k = 0; k < F::BITS; k++) {
        xs.push_back(field_of_nat<F>(ref.mod(nat_bit(k))));
        xs.push_back(field_of_nat<F>(nat_sub(q, nat_bit(k < F::BITS - 1 ? k : 0))));
    }
    for (u32 d = 1; d <= 5; d++) xs.push_back(field_of_nat<F>(nat_sub(q, Nat{d})));
    for (size_t i = 0; i < xs.size(); i++) {
        const F &x = xs[i];
        Nat xn = nat_of(x);
        CHECK(nat_cmp(xn, q) < 0, "%s test_sqr value %zu not below q", name, i);
        F m = F::mul32(x, x);
        CHECK(ref.is_mont_product(m, xn, xn), "%s mul32(x, x) %zu", name, i);
        CHECK(F::sqr32(x).eq(m), "%s sqr32 vs mul32 %zu", name, i);
        CHECK(x.sqr().eq(m), "%s sqr vs mul32 %zu", name, i);
        CHECK(F::join(F::sqr32_n_raw(x)).eq(m), "%s sqr32_n vs mul32 %zu", name, i);
        if constexpr (F::N32 == 8) CHECK(F::sqr32_8(x).eq(m), "%s sqr32_8 vs mul32 %zu", name, i);
        if constexpr (F::HEADROOM_4Q) {
            Nat q2 = nat_add(q, q);
            for (int up = 0; up < 2; up++) {
                F a = up ? field_of_nat<F>(nat_add(xn, q)) : x; // a < 2q, a ≡ x
                Nat an = nat_of(a);
                F l = F::sqr_lazy(a), raw = F::join(F::sqr32_n_raw(a, false));
                CHECK(nat_cmp(nat_of(l), q2) < 0 && nat_cmp(nat_of(raw), q2) < 0, "%s sqr_lazy not below 2q %zu/%d",
                      name, i, up);
                CHECK(nat_cmp(ref.mod(nat_of(l)), nat_of(m)) == 0 && nat_cmp(ref.mod(nat_of(raw)), nat_of(m)) == 0,
                      "%s sqr_lazy ≢ x² %zu/%d", name, i, up);
                CHECK(F::reduce_2q(l).eq(m) && F::join(F::sqr32_n_raw(a)).eq(m), "%s sqr of lazy %zu/%d", name, i,
                      up);
                (void)an;
            }
        }
    }
}

void test_fields_by_params() {
    test_sqr<Fp>("bn254 fp");
    test_sqr<Fr>("bn254 fr");
    test_sqr<Bls12381Fp>("bls12-381 fp");
    test_sqr<Bls12381Fr>("bls12-381 fr");
    test_params<Fp>("bn254 fp", true, true);
    test_params<Fr>("bn254 fr", true, true);
    test_params<Bls12381Fp>("bls12-381 fp", true, true);
    test_params<Bls12381Fr>("bls12-381 fr", false, false);
    test_fp2_over<Fp>("bn254");
    test_fp2_over<Bls12381Fp>("bls12-381");
}

// ─── curve traits (curve.cuh: Bn254, Bls12381) against gnark's points ──────
//
// curve_vectors.h holds gnark-crypto's b, b′, generators and [k]G for a few k
// (go run ./gpu/cuda/testdata/curvevectors): the points on the curve by the
// traits' coefficients, [k]G by double-and-add with XYZZ's formulas equal to
// gnark's, and 2G four ways (set_dbl_affine, dbl_assign, add, add_affine).
template <class F> F field_of_words(const uint64_t *w) {
    F r;
    for (int i = 0; i < F::N; i++) r.v[i] = w[i];
    return r;
}
template <class F> Fp2T<F> fp2_of_words(const uint64_t *a0, const uint64_t *a1) {
    Fp2T<F> r;
    r.a0 = field_of_words<F>(a0);
    r.a1 = field_of_words<F>(a1);
    return r;
}
template <class F> bool on_curve_b(const Affine<F> &a, const F &b) { return a.y.sqr().eq(a.x.sqr() * a.x + b); }
template <class F> bool affine_eq(const Affine<F> &a, const Affine<F> &b) { return a.x.eq(b.x) && a.y.eq(b.y); }
Nat nat_of_decimal(const char *s) {
    Nat r;
    for (; *s; s++) r = nat_add(nat_mul(r, Nat{10}), *s == '0' ? Nat{} : Nat{(u32)(*s - '0')});
    return r;
}
// scalar_mul: [k]g by double-and-add from k's top bit, mixed additions.
template <class F> Affine<F> scalar_mul(const Affine<F> &g, const Nat &k, const F &one) {
    XYZZ<F> r = XYZZ<F>::inf();
    for (size_t i = k.size() * 32; i-- > 0;) {
        r.dbl_assign();
        if ((k[i / 32] >> (i % 32)) & 1) r.add_affine(g.x, g.y, one);
    }
    return r.to_affine();
}
template <class F> void check_group(const char *name, const Affine<F> &g, const Affine<F> *kg, const char *const *ks,
                                    int n, const F &b, const F &one) {
    CHECK(on_curve_b(g, b), "%s generator on the curve", name);
    for (int i = 0; i < n; i++) {
        CHECK(on_curve_b(kg[i], b), "%s [%s]G on the curve", name, ks[i]);
        CHECK(affine_eq(scalar_mul(g, nat_of_decimal(ks[i]), one), kg[i]), "%s [%s]G", name, ks[i]);
    }
    XYZZ<F> a, c = XYZZ<F>::inf(), d, e;
    a.set_dbl_affine(g.x, g.y);
    c.add_affine(g.x, g.y, one);
    d = c;
    d.dbl_assign();
    e = c;
    e.add(c);
    c.add_affine(g.x, g.y, one);
    Affine<F> two = a.to_affine();
    CHECK(affine_eq(two, c.to_affine()) && affine_eq(two, d.to_affine()) && affine_eq(two, e.to_affine()),
          "%s 2G four ways", name);
    XYZZ<F> z = d; // 2G − 2G = ∞, by add and by add_affine
    z.add(d.neg());
    XYZZ<F> z2 = d;
    z2.add_affine(two.x, two.y.neg(), one);
    CHECK(z.is_inf() && z2.is_inf(), "%s P - P", name);
}
template <class C> void test_curve_traits(const char *name, const CurveVector *vs, int n, const uint64_t *b,
                                          const uint64_t (*b2)[6]) {
    typedef typename C::Fp F;
    typedef typename C::Fp2 E;
    CHECK(C::b().eq(field_of_words<F>(b)) && C::b2().eq(fp2_of_words<F>(b2[0], b2[1])), "%s b, b′", name);
    E one2 = E::zero();
    one2.a0 = F::one();
    std::vector<Affine<F>> k1;
    std::vector<Affine<E>> k2;
    std::vector<const char *> ks;
    for (int i = 0; i < n; i++) {
        k1.push_back({field_of_words<F>(vs[i].g1x), field_of_words<F>(vs[i].g1y)});
        k2.push_back({fp2_of_words<F>(vs[i].g2x0, vs[i].g2x1), fp2_of_words<F>(vs[i].g2y0, vs[i].g2y1)});
        ks.push_back(vs[i].k);
    }
    CHECK(std::string(ks[0]) == "1", "%s: the vectors start with G", name);
    char g1name[64], g2name[64];
    snprintf(g1name, sizeof g1name, "%s G1", name);
    snprintf(g2name, sizeof g2name, "%s G2", name);
    check_group<F>(g1name, k1[0], k1.data(), ks.data(), n, C::b(), F::one());
    check_group<E>(g2name, k2[0], k2.data(), ks.data(), n, C::b2(), one2);
    // [r − 1]G = −G: the last vector
    CHECK(affine_eq(k1[n - 1], Affine<F>{k1[0].x, k1[0].y.neg()}) &&
              affine_eq(k2[n - 1], Affine<E>{k2[0].x, k2[0].y.neg()}),
          "%s [r-1]G = -G", name);
}
void test_curves_by_traits() {
    test_curve_traits<Bn254>("bn254", bn254_vectors, sizeof bn254_vectors / sizeof *bn254_vectors, bn254_b, bn254_b2);
    test_curve_traits<Bls12381>("bls12-381", bls12381_vectors, sizeof bls12381_vectors / sizeof *bls12381_vectors,
                                bls12381_b, bls12381_b2);
}

std::vector<A1> make_bases(size_t n) {
    A1 G;
    G.x = mont<Fp>(1);
    G.y = mont<Fp>(2);
    std::vector<A1> out;
    P1 acc = P1::inf();
    // points k·G for random small-ish steps, with some repeats and one infinity
    for (size_t i = 0; i < n; i++) {
        int step = 1 + (int)(rng() % 5);
        for (int s = 0; s < step; s++) acc.add_affine(G.x, G.y, field_one<Fp>());
        out.push_back(to_aff(acc));
    }
    if (n > 3) out[2] = out[1]; // repeated point
    if (n > 5) {
        out[4].x = Fp::zero(); // infinity
        out[4].y = Fp::zero();
    }
    return out;
}

void test_curve() {
    A1 G;
    G.x = mont<Fp>(1);
    G.y = mont<Fp>(2);
    CHECK(on_curve(G), "G on curve");
    P1 d1;
    d1.set_dbl_affine(G.x, G.y);
    P1 d2 = P1::inf();
    d2.add_affine(G.x, G.y, field_one<Fp>());
    d2.add_affine(G.x, G.y, field_one<Fp>());
    P1 g = P1::inf();
    g.add_affine(G.x, G.y, field_one<Fp>());
    P1 d3 = g;
    d3.add(g);
    P1 d4 = g;
    d4.dbl_assign();
    A1 a1 = to_aff(d1);
    CHECK(on_curve(a1), "2G on curve");
    CHECK(aeq(a1, to_aff(d2)) && aeq(a1, to_aff(d3)) && aeq(a1, to_aff(d4)), "2G four ways");
    // 5G = 2G + 3G, = mul_small(5)
    P1 t3 = d1;
    t3.add_affine(G.x, G.y, field_one<Fp>());
    P1 t5 = t3;
    t5.add(d1);
    P1 m5 = g;
    m5.mul_small(5);
    CHECK(on_curve(to_aff(t5)) && aeq(to_aff(t5), to_aff(m5)), "5G");
    // mul_small from k's top bit: k·G by repeated addition, for k with
    // its top bit anywhere (the segments' multipliers), 0 and 1 included
    {
        P1 sum = P1::inf();
        u32 k = 0;
        for (u32 want : {0u, 1u, 2u, 3u, 8u, 255u, 256u, 1000u}) {
            for (; k < want; k++) sum.add(g);
            P1 m = g;
            m.mul_small(want);
            CHECK(aeq(to_aff(sum), to_aff(m)) && m.is_inf() == (want == 0), "mul_small(%u)", want);
        }
        P1 big = g, top = g; // 2^31·G by doublings against mul_small(2^31)
        for (int i = 0; i < 31; i++) big.dbl_assign();
        top.mul_small(1u << 31);
        CHECK(aeq(to_aff(big), to_aff(top)), "mul_small(2^31)");
    }
    // P + (−P) = ∞
    P1 z = t3;
    z.add(t3.neg());
    CHECK(z.is_inf(), "P-P");
    P1 z2 = t3;
    A1 a3 = to_aff(t3);
    z2.add_affine(a3.x, a3.y.neg(), field_one<Fp>());
    CHECK(z2.is_inf(), "P-P mixed");
}

void test_msm(size_t n, u32 L, bool use_idx, int mode) {
    std::vector<A1> bases = make_bases(n + 7);
    std::vector<Fr> sc(n);
    Fr one = R<Fr>();
    for (size_t i = 0; i < n; i++) {
        switch (mode) {
        case 0:
            sc[i] = fr_rnd();
            if (i % 7 == 3) sc[i] = Fr::zero();
            if (i % 11 == 5) sc[i] = one;
            if (i % 13 == 1) sc[i] = one.neg(); // r − 1
            break;
        case 1:
            sc[i] = one.neg(); // every scalar r − 1: one bucket per window
            break;
        case 2:
            sc[i] = mont<Fr>(2 + i % 3);
            break;
        }
    }
    std::vector<u32> idx(n);
    for (size_t i = 0; i < n; i++) idx[i] = (u32)((i * 3 + 1) % (n + 7));
    P1 want = P1::inf();
    for (size_t i = 0; i < n; i++) {
        const A1 &b = bases[use_idx ? idx[i] : i];
        if (b.is_inf()) continue;
        want.add(naive_mul(b, sc[i]));
    }
    P1 got = msm_emul(bases, sc, use_idx ? idx.data() : nullptr, L);
    CHECK(aeq(to_aff(want), to_aff(got)), "msm n=%zu L=%u idx=%d mode=%d", n, L, use_idx, mode);
}

void test_ones() {
    size_t n = 300;
    std::vector<A1> bases = make_bases(n);
    std::vector<u64> bm((n + 63) / 64, 0);
    P1 want = P1::inf();
    for (size_t j = 0; j < n; j++)
        if (rng() % 3 == 0 || j == 1 || j == 2 || j == 4) {
            bm[j / 64] |= 1ULL << (j % 64);
            if (!bases[j].is_inf()) want.add_affine(bases[j].x, bases[j].y, field_one<Fp>());
        }
    std::vector<P1> part(bm.size());
    for (size_t t = 0; t < bm.size(); t++) ones_body(t, bases.data(), bm.data(), n, part.data());
    P1 got = P1::inf();
    for (auto &p : part) got.add(p);
    CHECK(aeq(to_aff(want), to_aff(got)), "ones");
}

// ─── NTT ────────────────────────────────────────────────────────────────────

// coset_table: the two-level table of the scales g^j/n (ntt.cuh,
// coset_at) as domain_tables_run builds it: g^jl, then g^(jh·2^h)/n.
template <class S> std::vector<S> coset_table(S g, S ninv, S one, int logn) {
    const int h = coset_split(logn);
    const size_t lo = (size_t)1 << h, hi = (size_t)1 << (logn - h);
    std::vector<S> t(lo + hi);
    S step = g;
    for (int b = 0; b < h; b++) step = step.sqr();
    for (size_t i = 0; i < lo; i++) powers_body(i, g, one, t.data());
    for (size_t i = 0; i < hi; i++) powers_body(i, step, ninv, t.data() + lo);
    return t;
}

struct Dom {
    int logn;
    u32 n;
    Fr w, winv, g, ginv, ninv;
    std::vector<Fr> tw, twinv, gn, ginvn; // gn, ginvn: every j's scale, for the references
    std::vector<Fr> gn2, ginvn2;          // the kernels' two-level tables (coset_table)
};

Dom make_dom(int logn, Fr g) {
    Dom d;
    d.logn = logn;
    d.n = 1u << logn;
    // ω = 5^((r−1)/n)
    u64 e[4] = {Fr::q(0) - 1, Fr::q(1), Fr::q(2), Fr::q(3)};
    for (int i = 0; i < logn; i++) {
        for (int k = 0; k < 4; k++) e[k] = (e[k] >> 1) | (k < 3 ? e[k + 1] << 63 : 0);
    }
    d.w = pow(mont<Fr>(5), e);
    d.winv = inv(d.w);
    d.g = g;
    d.ginv = inv(g);
    d.ninv = inv(mont<Fr>(d.n));
    size_t h = d.n / 2;
    d.tw.resize(h ? h : 1);
    d.twinv.resize(h ? h : 1);
    d.gn.resize(d.n);
    d.ginvn.resize(d.n);
    for (size_t i = 0; i < h; i++) powers_body(i, d.w, R<Fr>(), d.tw.data()), powers_body(i, d.winv, R<Fr>(), d.twinv.data());
    for (size_t i = 0; i < d.n; i++) powers_body(i, d.g, d.ninv, d.gn.data()), powers_body(i, d.ginv, d.ninv, d.ginvn.data());
    d.gn2 = coset_table(d.g, d.ninv, R<Fr>(), logn);
    d.ginvn2 = coset_table(d.ginv, d.ninv, R<Fr>(), logn);
    for (u32 j = 0; j < d.n; j++)
        CHECK(coset_at(d.gn2.data(), j, logn).eq(d.gn[j]) && coset_at(d.ginvn2.data(), j, logn).eq(d.ginvn[j]),
              "two-level coset scale %u of 2^%d", j, logn);
    return d;
}

template <class S, class DM> void dif(std::vector<S> &x, const DM &d, const std::vector<S> &tw) {
    for (u32 m = d.n / 2; m >= 1; m >>= 1)
        for (u32 t = 0; t < d.n / 2; t++) dif_body(t, x.data(), d.n, m, tw.data());
}
template <class S, class DM> void dit(std::vector<S> &x, const DM &d, const std::vector<S> &tw) {
    for (u32 m = 1; m <= d.n / 2; m <<= 1)
        for (u32 t = 0; t < d.n / 2; t++) dit_body(t, x.data(), d.n, m, tw.data());
}
// passes mirrors ntt_passes in zkpipe.cu: S stages a pass, G groups a block.
void passes(std::vector<Fr> &x, const Dom &d, const std::vector<Fr> &tw, bool difp, int S) {
    int rem = d.logn;
    u32 mtop = d.n / 2, mlow = 1;
    const u32 threads = 8;
    while (rem > 0) {
        int s = rem < S ? rem : S;
        if (difp) mlow = mtop >> (s - 1);
        u32 ngroups = d.n >> s, size = 1u << s;
        u32 G = threads >> (s - 1);
        if (G == 0) G = 1;
        for (u32 g0 = 0; g0 < ngroups; g0 += G) {
            std::vector<Fr> sh(G * size);
            for (u32 q = 0; q < G * size; q++) {
                u32 k = q / G, gi = q % G;
                if (g0 + gi < ngroups) sh[gi * size + k] = x[group_pos(g0 + gi, k, mlow, s)];
            }
            for (int i = 0; i < s; i++) {
                int tt = difp ? s - 1 - i : i;
                for (u32 gi = 0; gi < G; gi++)
                    for (u32 u = 0; u < size / 2; u++)
                        if (g0 + gi < ngroups) group_bfly(&sh[gi * size], u, tt, (g0 + gi) % mlow, mlow, d.n, tw.data(), difp);
            }
            for (u32 q = 0; q < G * size; q++) {
                u32 k = q / G, gi = q % G;
                if (g0 + gi < ngroups) x[group_pos(g0 + gi, k, mlow, s)] = sh[gi * size + k];
            }
        }
        rem -= s;
        if (difp)
            mtop = mlow / 2;
        else
            mlow <<= s;
    }
}

void test_passes(int logn) {
    Dom d = make_dom(logn, mont<Fr>(5));
    for (int S : {1, 2, 3, 8}) {
        std::vector<Fr> x(d.n);
        for (auto &v : x) v = fr_rnd();
        std::vector<Fr> a = x, b = x;
        dif(a, d, d.tw);
        passes(b, d, d.tw, true, S);
        bool ok = true;
        for (u32 i = 0; i < d.n; i++) ok = ok && a[i].eq(b[i]);
        CHECK(ok, "dif passes logn=%d S=%d", logn, S);
        a = x, b = x;
        dit(a, d, d.tw);
        passes(b, d, d.tw, false, S);
        ok = true;
        for (u32 i = 0; i < d.n; i++) ok = ok && a[i].eq(b[i]);
        CHECK(ok, "dit passes logn=%d S=%d", logn, S);
    }
}

void scale_rev(std::vector<Fr> &x, const Dom &d, const std::vector<Fr> &tab) {
    for (u32 p = 0; p < d.n; p++) x[p] = x[p] * tab[bitrev(p, d.logn)];
}
// regs_pass_blocks: one pass of regs_passes, every block in turn: copied in
// and out by regs_elem/regs_slot_of, its threads' rounds in turn (threads
// of one round touch disjoint elements).
template <bool DIF, bool LAZY, bool GL, class S, class DM>
void regs_pass_blocks(std::vector<S> &x, const DM &d, const std::vector<S> &tw, const RegsPass &P, bool lastp,
                      const S *scale) {
    u32 E = 1u << (P.lgG + P.s), mlow = 1u << P.lgm, threads = E / 8;
    std::vector<Half> sh(regs_smem_bytes(E) / sizeof(Half));
    Half *gx = reinterpret_cast<Half *>(x.data());
    for (u32 blk = 0; blk < (d.n >> (P.s + P.lgG)); blk++) {
        u32 g0 = blk << P.lgG;
        for (u32 q = 0; q < 2 * E; q++) {
            u32 gi, k, h = q & 1;
            regs_elem(q >> 1, P.lgG, P.lgm, P.s, gi, k);
            sh[h * (E + REGS_PLANE1) + regs_slot_of<GL>((gi << P.s) | k, P.s)] = gx[2 * group_pos(g0 + gi, k, mlow, P.s) + h];
        }
        for (int ri = 0; ri < regs_rounds(P.s); ri++)
            for (u32 t = 0; t < threads; t++) {
                const bool canon = ri == regs_rounds(P.s) - 1 && lastp;
                regs_round<DIF, LAZY, GL>(sh.data(), E, t, ri, P.s, g0, P.lgm, d.logn, tw.data(), DIF && canon ? scale : nullptr,
                                          canon);
            }
        for (u32 q = 0; q < 2 * E; q++) {
            u32 gi, k, h = q & 1;
            regs_elem(q >> 1, P.lgG, P.lgm, P.s, gi, k);
            gx[2 * group_pos(g0 + gi, k, mlow, P.s) + h] = sh[h * (E + REGS_PLANE1) + regs_slot_of<GL>((gi << P.s) | k, P.s)];
        }
    }
}
template <bool DIF, bool LAZY, class S, class DM>
void regs_pass_gl(std::vector<S> &x, const DM &d, const std::vector<S> &tw, const RegsPass &P, bool lastp,
                  const S *scale, bool gl) {
    if (gl)
        regs_pass_blocks<DIF, LAZY, true>(x, d, tw, P, lastp, scale);
    else
        regs_pass_blocks<DIF, LAZY, false>(x, d, tw, P, lastp, scale);
}

// regs_passes mirrors ntt_regs and k_ntt_regs: regs_plan's passes. lazy: as
// k_ntt_regs<…, LAZY = true>, the last pass's last round canonical. lanes:
// groups across lanes where regs_lanes_ok (ntt.cuh's GL). trace
// (non-null): x after each pass; lanes_used (non-null): how many passes
// took groups across lanes.
// Over a field whose kernels are eager (NTT_LAZY false: none today; BLS12-381's
// Fr was, built with the retired ZK_BLS_NTT_LAZY=0) lazy is refused (a failed check).
template <class T> struct same_type { typedef T type; }; // a parameter that takes no part in deduction
template <class S, class DM>
void regs_passes(std::vector<S> &x, const DM &d, const std::vector<S> &tw, bool difp, int stages, int lgblock,
                 const typename same_type<S>::type *scale = nullptr, bool lazy = false,
                 typename same_type<std::vector<std::vector<S>>>::type *trace = nullptr, bool lanes = false,
                 int *lanes_used = nullptr) {
    RegsPass ps[10];
    int np = regs_plan(d.logn, stages, lgblock, difp, ps);
    for (int p = 0; p < np; p++) {
        const RegsPass &P = ps[p];
        CHECK(P.s >= 3 && P.s <= (stages > 5 ? stages : 5) && P.lgG + P.s <= (lgblock > P.s ? lgblock : P.s), "regs plan logn=%d pass %d: s=%d lgG=%d",
              d.logn, p, P.s, P.lgG);
        const bool lastp = p == np - 1, gl = lanes && regs_lanes_ok(P.s, P.lgG, P.lgm);
        if (gl && lanes_used) ++*lanes_used;
        if constexpr (NTT_LAZY<S>) {
            if (difp && lazy)
                regs_pass_gl<true, true>(x, d, tw, P, lastp, scale, gl);
            else if (difp)
                regs_pass_gl<true, false>(x, d, tw, P, lastp, scale, gl);
            else if (lazy)
                regs_pass_gl<false, true>(x, d, tw, P, lastp, (const S *)nullptr, gl);
            else
                regs_pass_gl<false, false>(x, d, tw, P, lastp, (const S *)nullptr, gl);
        } else {
            CHECK(!lazy, "regs passes: lazy over a field built eager");
            if (difp)
                regs_pass_gl<true, false>(x, d, tw, P, lastp, scale, gl);
            else
                regs_pass_gl<false, false>(x, d, tw, P, lastp, (const S *)nullptr, gl);
        }
        if (trace) trace->push_back(x);
    }
}

// regs_case: one regs NTT, eager (canonical throughout) and lazy, against
// the radix-2 one (want): both equal to it bit for bit (so canonical); the
// lazy one's elements below 2q after every pass and congruent mod q to the
// eager one's. Returns how many of the lazy passes' elements (before the
// last) were in [q, 2q), so that the caller can require some.
size_t regs_case(const char *what, const std::vector<Fr> &x, const std::vector<Fr> &want, const Dom &d,
                 const std::vector<Fr> &tw, bool difp, int stages, int lgblock, const Fr *scale, int *lanes_used) {
    std::vector<std::vector<Fr>> te, tl;
    std::vector<Fr> e = x, l = x, g = x, ge = x;
    regs_passes(e, d, tw, difp, stages, lgblock, scale, false, &te);
    regs_passes(l, d, tw, difp, stages, lgblock, scale, true, &tl);
    regs_passes(g, d, tw, difp, stages, lgblock, scale, true, nullptr, true, lanes_used); // lazy, groups across lanes
    regs_passes(ge, d, tw, difp, stages, lgblock, scale, false, nullptr, true);          // eager, groups across lanes
    bool ok_e = true, ok_l = true, ok_g = true, canon = true, range = true, cong = true;
    size_t high = 0;
    for (u32 i = 0; i < d.n; i++) {
        ok_e = ok_e && want[i].eq(e[i]);
        ok_l = ok_l && want[i].eq(l[i]);
        ok_g = ok_g && want[i].eq(g[i]) && want[i].eq(ge[i]);
        canon = canon && below(l[i], 1);
    }
    CHECK(ok_g, "%s regs logn=%d stages=%d block=2^%d: groups across lanes", what, d.logn, stages, lgblock);
    for (size_t p = 0; p < tl.size(); p++)
        for (u32 i = 0; i < d.n; i++) {
            range = range && below(tl[p][i], 2);
            cong = cong && lazy_mod(tl[p][i]).eq(te[p][i]);
            if (p + 1 < tl.size() && !below(tl[p][i], 1)) high++;
        }
    CHECK(ok_e, "%s regs logn=%d stages=%d block=2^%d: eager", what, d.logn, stages, lgblock);
    CHECK(ok_l && canon, "%s regs logn=%d stages=%d block=2^%d: lazy (canonical %d)", what, d.logn, stages, lgblock, canon);
    CHECK(range && cong, "%s regs logn=%d stages=%d block=2^%d: lazy passes (below 2q %d, mod q %d)", what, d.logn, stages,
          lgblock, range, cong);
    return high;
}

void test_regs(int logn) {
    Dom d = make_dom(logn, mont<Fr>(5));
    std::vector<Fr> x(d.n);
    for (auto &v : x) v = fr_rnd();
    x[0] = Fr::zero() - mont<Fr>(1); // q − 1 among them
    size_t high = 0;
    int lanes_used = 0;
    bool multi = false; // some plan of more than one pass
    for (int stages : {3, 4, 5, 7, 8, 12})
        for (int lgblock : {8, 10, 12}) {
            RegsPass ps[10];
            multi = multi || regs_plan(logn, stages, lgblock, true, ps) > 1;
            std::vector<Fr> a = x;
            dif(a, d, d.tw);
            high += regs_case("dif", x, a, d, d.tw, true, stages, lgblock, nullptr, &lanes_used);
            a = x;
            dit(a, d, d.twinv);
            high += regs_case("dit", x, a, d, d.twinv, false, stages, lgblock, nullptr, &lanes_used);
            // DIF with the coset scaling in its last pass, as compute_h runs it
            a = x;
            dif(a, d, d.twinv);
            scale_rev(a, d, d.gn);
            high += regs_case("dif scaled", x, a, d, d.twinv, true, stages, lgblock, d.gn2.data(), &lanes_used);
        }
    // the lazy passes' outputs in [q, 2q) reach the next pass (and its
    // copy-in) wherever a plan has several passes
    CHECK(!multi || high > 0, "regs logn=%d: no lazy element in [q, 2q) between passes", logn);
}

// test_regs_lanes: regs_case at plans that have passes regs_lanes_ok admits
// (four groups a block, s ≥ 6, mlow ≥ 4), `want` of them in each of the
// DIF, DIT and scaled DIF (8 stages in blocks of 2^10 is the default).
void test_regs_lanes(int logn, int stages, int lgblock, int want) {
    Dom d = make_dom(logn, mont<Fr>(5));
    std::vector<Fr> x(d.n);
    for (auto &v : x) v = fr_rnd();
    x[1] = Fr::zero() - mont<Fr>(1);
    int used = 0;
    std::vector<Fr> a = x;
    dif(a, d, d.tw);
    regs_case("dif", x, a, d, d.tw, true, stages, lgblock, nullptr, &used);
    a = x;
    dit(a, d, d.twinv);
    regs_case("dit", x, a, d, d.twinv, false, stages, lgblock, nullptr, &used);
    a = x;
    dif(a, d, d.twinv);
    scale_rev(a, d, d.gn);
    regs_case("dif scaled", x, a, d, d.twinv, true, stages, lgblock, d.gn2.data(), &used);
    CHECK(used == 3 * want, "regs lanes logn=%d stages=%d block=2^%d: %d passes took groups across lanes, want %d", logn,
          stages, lgblock, used, 3 * want);
}

// ─── BLS12-381: the MSM over G1 and G2 and the NTT over its Fr ──────────────
//
// The same bodies the kernels run, instantiated over BLS12-381's types
// (the curve's generators from gnark-crypto: curve_vectors.h), against
// double-and-add and a naive DFT. What is BLS12-381's own here: 255-bit
// scalars (msm_windows<S>: ⌈256/c⌉ windows, r − 1's top window), 6-limb Fp
// and Fp2 over it in the buckets, and the NTT's lazy butterflies with only
// 2q < R (products by canonical twiddles: mul_lazy_by).

template <class S> S scalar_rnd() {
    S r;
    for (int k = 0; k < 4; k++) r.v[k] = rng();
    r.v[3] %= S::q(3); // below q's top limb: any value < q
    return r;
}

template <class F> XYZZ<F> double_and_add(const Affine<F> &a, const ScalarOf<F> &k_mont) {
    ScalarOf<F> k = k_mont.from_mont();
    XYZZ<F> r = XYZZ<F>::inf(), base = XYZZ<F>::inf();
    if (!a.is_inf()) base.add_affine(a.x, a.y, field_one<F>());
    for (int i = 255; i >= 0; i--) {
        r.dbl_assign();
        if ((k.v[i / 64] >> (i % 64)) & 1) r.add(base);
    }
    return r;
}

// bases_from: n points k·G for random small steps, a repeat and an infinity.
template <class F> std::vector<Affine<F>> bases_from(const Affine<F> &G, size_t n) {
    std::vector<Affine<F>> out;
    XYZZ<F> acc = XYZZ<F>::inf();
    for (size_t i = 0; i < n; i++) {
        int step = 1 + (int)(rng() % 5);
        for (int k = 0; k < step; k++) acc.add_affine(G.x, G.y, field_one<F>());
        out.push_back(acc.to_affine());
    }
    if (n > 3) out[2] = out[1];
    if (n > 5) out[4] = Affine<F>{F::zero(), F::zero()};
    return out;
}

// test_msm_over: msm_emul (digits, sort, levels, segments, windows) against
// Σ double-and-add; mode 0: random scalars with 0, 1 and r − 1 among them,
// 1: every scalar r − 1 (the top window's digit on every point).
template <class F> void test_msm_over(const char *name, const Affine<F> &G, size_t n, u32 L, bool use_idx, int mode) {
    typedef ScalarOf<F> S;
    std::vector<Affine<F>> bases = bases_from(G, n + 7);
    std::vector<S> sc(n);
    S one = S::one();
    for (size_t i = 0; i < n; i++) {
        sc[i] = mode == 1 ? one.neg() : scalar_rnd<S>();
        if (mode == 0 && i % 7 == 3) sc[i] = S::zero();
        if (mode == 0 && i % 11 == 5) sc[i] = one;
        if (mode == 0 && i % 13 == 1) sc[i] = one.neg();
    }
    std::vector<u32> idx(n);
    for (size_t i = 0; i < n; i++) idx[i] = (u32)((i * 3 + 1) % (n + 7));
    XYZZ<F> want = XYZZ<F>::inf();
    for (size_t i = 0; i < n; i++) {
        const Affine<F> &b = bases[use_idx ? idx[i] : i];
        if (!b.is_inf()) want.add(double_and_add(b, sc[i]));
    }
    XYZZ<F> got = msm_emul(bases, sc, use_idx ? idx.data() : nullptr, L);
    CHECK(affine_eq(want.to_affine(), got.to_affine()), "%s msm n=%zu L=%u idx=%d mode=%d", name, n, L, use_idx, mode);
}

// test_reduce_buckets: reduce_emul (reduce_buckets' steps) against
// Σ (q+1)·B_q by mul_small, over sets of random multiples of G with empty
// buckets among them: one segment a set (no bit classes), fewer segments
// than a k_bitsum block takes, more (several parts a class), S from 2 up.
template <class F> void test_reduce_buckets(const char *name, const Affine<F> &G) {
    std::vector<Affine<F>> pts = bases_from(G, 64);
    const F one = field_one<F>();
    struct Case {
        u32 sets, half, S;
    };
    for (Case cs : {Case{1, 8, 8}, Case{3, 64, 2}, Case{2, 32, 4}, Case{1, 1024, 2}, Case{4, 256, 8}}) {
        u32 nb = cs.sets * cs.half;
        std::vector<XYZZ<F>> P;
        std::vector<u32> start(nb), cnt(nb);
        for (u32 b = 0; b < nb; b++) {
            start[b] = (u32)P.size();
            const Affine<F> &a = pts[rng() % pts.size()];
            cnt[b] = (b % 5 != 2) && !a.is_inf(); // some buckets empty
            if (cnt[b]) {
                XYZZ<F> p = XYZZ<F>::inf();
                p.add_affine(a.x, a.y, one);
                P.push_back(p);
            }
        }
        if (P.empty()) P.push_back(XYZZ<F>::inf());
        // bitsum_per's parts, and parts of 2 items and of a whole class
        // (bitsum_per's widest), which must give the same sums
        for (u32 per : {0u, 2u, cs.half / cs.S}) {
            if (per > cs.half / cs.S) continue;
            std::vector<XYZZ<F>> got = reduce_emul(P, start, cnt, cs.sets, cs.half, cs.S, per);
            for (u32 set = 0; set < cs.sets; set++) {
                XYZZ<F> want = XYZZ<F>::inf();
                for (u32 q = 0; q < cs.half; q++) {
                    XYZZ<F> t = bucket_at(P.data(), start.data(), cnt.data(), set * cs.half + q);
                    t.mul_small(q + 1);
                    want.add(t);
                }
                Affine<F> a = want.to_affine(), b = got[set].to_affine();
                CHECK(a.x.eq(b.x) && a.y.eq(b.y), "%s reduce_buckets: set %u of %u, half %u, S %u, per %u", name, set,
                      cs.sets, cs.half, cs.S, per);
            }
        }
    }
}

// test_add_affine_late: add_affine_late (y read after P, either sign)
// against add_affine_eager of (x, ±y): the same limbs out, from infinity,
// from sums of points, on the doubling (the point itself) and the inverse
// (its negation) branches.
template <class F> void test_add_affine_late(const char *name, const Affine<F> &G) {
    std::vector<Affine<F>> as = bases_from(G, 40);
    const F one = field_one<F>();
    auto same = [](const XYZZ<F> &a, const XYZZ<F> &b) {
        return a.X.eq(b.X) && a.Y.eq(b.Y) && a.ZZ.eq(b.ZZ) && a.ZZZ.eq(b.ZZZ);
    };
    XYZZ<F> acc = XYZZ<F>::inf();
    int n = 0;
    for (size_t i = 0; i < as.size(); i++) {
        if (as[i].is_inf()) continue;
        for (bool neg : {false, true}) {
            F y = neg ? as[i].y.neg() : as[i].y;
            XYZZ<F> single = XYZZ<F>::inf();
            single.add_affine_eager(as[i].x, as[i].y, one);
            for (const XYZZ<F> &start : {XYZZ<F>::inf(), acc, single, single.neg()}) {
                XYZZ<F> e = start, l = start;
                e.add_affine_eager(as[i].x, y, one);
                l.add_affine_late(as[i].x, &as[i].y, neg, one);
                CHECK(same(e, l), "%s add_affine_late %zu neg=%d", name, i, neg);
                n++;
            }
        }
        acc.add_affine_eager(as[i].x, as[i].y, one);
    }
    CHECK(n > 100, "%s add_affine_late: %d cases", name, n);
}

// test_lazy_curve: BLS12-381 G1's lazy additions (add_affine_lazy,
// add_lazy: curve.cuh) against the canonical ones (add_affine_eager,
// add_eager), the first of which add/add_affine run (curve.cuh LazyCurve): the same
// limbs out (both canonical), over sums of multiples of G that reach every
// branch: P ≢ 0, the doubling (a point plus itself), the inverse (plus its
// negation), infinity on either side.
void test_lazy_curve() {
    typedef Bls12381::Fp F;
    static_assert(F::LAZY_DOT_OK && !Fp::LAZY_DOT_OK, "LAZY_DOT_OK: BLS12-381's Fp only");
    const CurveVector &g = bls12381_vectors[0];
    Affine<F> g1{field_of_words<F>(g.g1x), field_of_words<F>(g.g1y)};
    std::vector<Affine<F>> as = bases_from(g1, 60);
    const F one = F::one();
    FieldRef<F> ref;
    auto canonical = [&](const XYZZ<F> &p) {
        return nat_cmp(nat_of(p.X), ref.q) < 0 && nat_cmp(nat_of(p.Y), ref.q) < 0 &&
               nat_cmp(nat_of(p.ZZ), ref.q) < 0 && nat_cmp(nat_of(p.ZZZ), ref.q) < 0;
    };
    auto same = [](const XYZZ<F> &a, const XYZZ<F> &b) {
        return a.X.eq(b.X) && a.Y.eq(b.Y) && a.ZZ.eq(b.ZZ) && a.ZZZ.eq(b.ZZZ);
    };
    std::vector<XYZZ<F>> ps = {XYZZ<F>::inf()};
    XYZZ<F> acc = XYZZ<F>::inf();
    for (size_t i = 0; i < as.size(); i++) {
        if (as[i].is_inf()) continue;
        XYZZ<F> e = acc, l = acc;
        e.add_affine_eager(as[i].x, as[i].y, one);
        l.add_affine_lazy(as[i].x, as[i].y, one);
        CHECK(same(e, l) && canonical(l), "bls12-381 add_affine_lazy %zu", i);
        acc = e;
        ps.push_back(e);
        XYZZ<F> a1 = XYZZ<F>::inf();
        a1.add_affine_eager(as[i].x, as[i].y, one);
        ps.push_back(a1);
        ps.push_back(a1.neg());
        // the doubling and the inverse branches of the mixed addition
        XYZZ<F> d = a1, dl = a1;
        d.add_affine_eager(as[i].x, as[i].y, one);
        dl.add_affine_lazy(as[i].x, as[i].y, one);
        CHECK(same(d, dl) && !dl.is_inf(), "bls12-381 add_affine_lazy doubling %zu", i);
        XYZZ<F> z = a1;
        z.add_affine_lazy(as[i].x, as[i].y.neg(), one);
        CHECK(z.is_inf(), "bls12-381 add_affine_lazy inverse %zu", i);
    }
    int n = 0;
    for (size_t i = 0; i < ps.size(); i++)
        for (size_t j = 0; j < ps.size(); j += 1 + (i % 3), n++) {
            XYZZ<F> e = ps[i], l = ps[i];
            e.add_eager(ps[j]);
            l.add_lazy(ps[j]);
            CHECK(same(e, l) && canonical(l), "bls12-381 add_lazy %zu,%zu", i, j);
        }
    // a sum of points and the same sum's negation: infinity
    XYZZ<F> s = acc;
    s.add_lazy(acc.neg());
    CHECK(s.is_inf() && n > 1000, "bls12-381 add_lazy of a point and its negation");
}

void test_bls12381_msm() {
    typedef Bls12381::Fp F;
    typedef Bls12381::Fp2 E;
    const CurveVector &g = bls12381_vectors[0];
    Affine<F> g1{field_of_words<F>(g.g1x), field_of_words<F>(g.g1y)};
    Affine<E> g2{fp2_of_words<F>(g.g2x0, g.g2x1), fp2_of_words<F>(g.g2y0, g.g2y1)};
    // the windows: one more bit than BN254's scalars
    CHECK(msm_windows<Bls12381Fr>(16) == 16 && msm_windows<Fr>(16) == 16 && msm_windows<Bls12381Fr>(15) == 18 &&
              msm_windows<Fr>(15) == 17 && msm_windows<Bls12381Fr>(17) == 16 && msm_windows<Fr>(17) == 15 &&
              msm_windows<Bls12381Fr>(4) == 64,
          "bls12-381 windows");
    int c = 0, nw = 0;
    MsmTuning T;
    CHECK(msm_table_layout<Bls12381Fp>((size_t)1 << 22, T, &c, &nw) == 0 && c == 20 && nw == 13, "bls table 2^22: %d %d", c, nw);
    CHECK(msm_table_layout<Bls12381Fp>((size_t)1 << 21, T, &c, &nw) == 0 && c == 19 && nw == 14, "bls table 2^21: %d %d", c, nw);
    // from 2^24 bases BLS12-381's G1 takes 22-bit windows (12), its G2 and BN254's 20 (13); a
    // configured window is every group's
    CHECK(msm_table_layout<Bls12381Fp>((size_t)1 << 24, T, &c, &nw) == 0 && c == 22 && nw == 12, "bls G1 table 2^24: %d %d", c, nw);
    CHECK(msm_table_layout<Bls12381Fp>(((size_t)1 << 24) - 1, T, &c, &nw) == 0 && c == 20 && nw == 13,
          "bls G1 table 2^24 − 1: %d %d", c, nw);
    CHECK(msm_table_layout<Bls12381Fp2>((size_t)1 << 24, T, &c, &nw) == 0 && c == 20 && nw == 13, "bls G2 table 2^24: %d %d", c, nw);
    CHECK(msm_table_layout<Fp2>((size_t)1 << 24, T, &c, &nw) == 0 && c == 20, "bn254 G2 table 2^24: %d", c);
    {
        MsmTuning t19;
        t19.window = 19;
        CHECK(msm_table_layout<Bls12381Fp>((size_t)1 << 24, t19, &c, &nw) == 0 && c == 19, "bls G1 table, window 19: %d", c);
    }
    for (size_t n : {1, 2, 17, 300})
        for (u32 L : {2u, 32u}) test_msm_over<F>("bls12-381 G1", g1, n, L, false, 0);
    test_reduce_buckets<F>("bls12-381 G1", g1);
    test_reduce_buckets<E>("bls12-381 G2", g2);
    test_add_affine_late<E>("bls12-381 G2", g2);
    test_add_affine_late<F>("bls12-381 G1", g1);
    test_msm_over<F>("bls12-381 G1", g1, 150, 4, true, 0);
    test_msm_over<F>("bls12-381 G1", g1, 200, 32, true, 1);
    test_msm_over<F>("bls12-381 G1", g1, 600, 32, false, 0); // c = 5: ⌈256/5⌉ = 52 windows
    test_msm_over<F>("bls12-381 G1", g1, 2100, 32, true, 0); // c = 7
    for (size_t n : {1, 3, 100})
        for (u32 L : {2u, 32u}) test_msm_over<E>("bls12-381 G2", g2, n, L, n == 100, 0);
    test_msm_over<E>("bls12-381 G2", g2, 64, 3, false, 1);
    test_msm_over<E>("bls12-381 G2", g2, 600, 32, true, 0);
    // ones_body over G1 and G2
    size_t n = 200;
    std::vector<Affine<F>> b1 = bases_from(g1, n);
    std::vector<Affine<E>> b2 = bases_from(g2, n);
    std::vector<u64> bm((n + 63) / 64, 0);
    XYZZ<F> w1 = XYZZ<F>::inf();
    XYZZ<E> w2 = XYZZ<E>::inf();
    for (size_t j = 0; j < n; j++)
        if (rng() % 3 == 0 || j == 1 || j == 2 || j == 4) {
            bm[j / 64] |= 1ULL << (j % 64);
            if (!b1[j].is_inf()) w1.add_affine(b1[j].x, b1[j].y, field_one<F>());
            if (!b2[j].is_inf()) w2.add_affine(b2[j].x, b2[j].y, field_one<E>());
        }
    std::vector<XYZZ<F>> p1(bm.size());
    std::vector<XYZZ<E>> p2(bm.size());
    XYZZ<F> s1 = XYZZ<F>::inf();
    XYZZ<E> s2 = XYZZ<E>::inf();
    for (size_t t = 0; t < bm.size(); t++) {
        ones_body(t, b1.data(), bm.data(), n, p1.data());
        ones_body(t, b2.data(), bm.data(), n, p2.data());
        s1.add(p1[t]);
        s2.add(p2[t]);
    }
    CHECK(affine_eq(w1.to_affine(), s1.to_affine()) && affine_eq(w2.to_affine(), s2.to_affine()), "bls12-381 ones");
    // a table's column (precompute_body): 2^(c·w)·P by doublings
    std::vector<Affine<F>> tab(3 * 5);
    for (size_t i = 0; i < 5; i++) precompute_body(i, b1.data(), 5, 7, 3, tab.data());
    XYZZ<F> t = XYZZ<F>::inf();
    t.add_affine(b1[3].x, b1[3].y, field_one<F>());
    for (int k = 0; k < 14; k++) t.dbl_assign();
    CHECK(affine_eq(tab[2 * 5 + 3], t.to_affine()), "bls12-381 table column");
}

// NttDom: a domain of n over S, ω = gen^((q−1)/n), coset generator gen.
template <class S> struct NttDom {
    int logn;
    u32 n;
    S w, g;
    std::vector<S> tw, twinv, gn, ginvn; // gn, ginvn: every j's scale, for the references
    std::vector<S> gn2, ginvn2;          // the kernels' two-level tables (coset_table)
};
template <class S> NttDom<S> ntt_dom(int logn, u64 gen) {
    NttDom<S> d;
    d.logn = logn;
    d.n = 1u << logn;
    u64 e[4] = {S::q(0) - 1, S::q(1), S::q(2), S::q(3)};
    for (int i = 0; i < logn; i++)
        for (int k = 0; k < 4; k++) e[k] = (e[k] >> 1) | (k < 3 ? e[k + 1] << 63 : 0);
    d.g = mont<S>(gen);
    d.w = pow(d.g, e);
    S winv = inv(d.w), ninv = inv(mont<S>(d.n));
    size_t h = d.n / 2 ? d.n / 2 : 1;
    d.tw.resize(h);
    d.twinv.resize(h);
    d.gn.resize(d.n);
    for (size_t i = 0; i < h; i++) powers_body(i, d.w, S::one(), d.tw.data()), powers_body(i, winv, S::one(), d.twinv.data());
    d.ginvn.resize(d.n);
    S ginv = inv(d.g);
    for (size_t i = 0; i < d.n; i++) powers_body(i, d.g, ninv, d.gn.data()), powers_body(i, ginv, ninv, d.ginvn.data());
    d.gn2 = coset_table(d.g, ninv, S::one(), logn);
    d.ginvn2 = coset_table(ginv, ninv, S::one(), logn);
    for (u32 j = 0; j < d.n; j++)
        CHECK(coset_at(d.gn2.data(), j, logn).eq(d.gn[j]) && coset_at(d.ginvn2.data(), j, logn).eq(d.ginvn[j]),
              "two-level coset scale %u of 2^%d", j, logn);
    return d;
}

// test_bls12381_ntt: over BLS12-381's Fr (generator 7, two-adicity 32): ω
// has order n exactly; the radix-2 DIF is the DFT in bit-reversed order;
// the regs passes (eager, and lazy as the kernels run them) match it at
// several plans,
// DIT and the scaled DIF of compute_h included; DIT after the inverse DIF
// with 1/n is the identity.
void test_bls12381_ntt(int logn) {
    typedef Bls12381Fr S;
    static_assert(NTT_LAZY<S> && NTT_LAZY<Fr>, "both curves' NTTs run lazy");
    const bool L = NTT_LAZY<S>; // as the kernels run it
    NttDom<S> d = ntt_dom<S>(logn, 7);
    {
        S p = d.w;
        for (int i = 0; i < logn; i++) {
            CHECK(!p.eq(S::one()) || d.n == 1, "bls ω^(2^%d) = 1 before n = 2^%d", i, logn);
            p = p.sqr();
        }
        CHECK(p.eq(S::one()), "bls ω^n ≠ 1 (logn=%d)", logn);
    }
    std::vector<S> x(d.n);
    for (auto &v : x) v = scalar_rnd<S>();
    x[0] = S::zero() - S::one();
    std::vector<S> want(d.n);
    for (u32 k = 0; k < d.n; k++) {
        S acc = S::zero(), wk = S::one(), step = S::one();
        for (u32 i = 0; i < k; i++) step = step * d.w;
        for (u32 j = 0; j < d.n; j++) acc = acc + x[j] * wk, wk = wk * step;
        want[bitrev(k, logn)] = acc;
    }
    std::vector<S> a = x;
    dif(a, d, d.tw);
    bool ok = true;
    for (u32 i = 0; i < d.n; i++) ok = ok && a[i].eq(want[i]);
    CHECK(ok, "bls dif = DFT (logn=%d)", logn);
    if (logn < 3) return;
    size_t high = 0; // lazy elements in [q, 2q) between passes
    bool multi = false;
    for (int stages : {3, 5, 8})
        for (int lgblock : {8, 10}) {
            // eager and lazy (the kernels' way), both bit-equal to the DFT;
            // the lazy passes' elements below 2q and congruent to the eager ones
            std::vector<S> e = x, l = x;
            std::vector<std::vector<S>> te, tl;
            regs_passes(e, d, d.tw, true, stages, lgblock, (const S *)nullptr, false, &te);
            if (L) regs_passes(l, d, d.tw, true, stages, lgblock, (const S *)nullptr, true, &tl);
            ok = true;
            for (u32 i = 0; i < d.n; i++) ok = ok && e[i].eq(want[i]) && below(e[i], 1) && (!L || l[i].eq(want[i]));
            CHECK(ok, "bls regs dif logn=%d stages=%d block=2^%d (lazy %d)", logn, stages, lgblock, L);
            multi = multi || tl.size() > 1;
            for (size_t p = 0; p < tl.size(); p++)
                for (u32 i = 0; i < d.n; i++) {
                    CHECK(below(tl[p][i], 2) && lazy_mod(tl[p][i]).eq(te[p][i]), "bls lazy dif logn=%d stages=%d pass %zu: %u", logn,
                          stages, p, i);
                    if (p + 1 < tl.size() && !below(tl[p][i], 1)) high++;
                }
            std::vector<S> r = x, b = x;
            dit(r, d, d.twinv);
            regs_passes(b, d, d.twinv, false, stages, lgblock, (const S *)nullptr, L, nullptr, true);
            ok = true;
            for (u32 i = 0; i < d.n; i++) ok = ok && r[i].eq(b[i]);
            CHECK(ok, "bls regs dit logn=%d stages=%d block=2^%d (groups across lanes where they fit)", logn, stages, lgblock);
            // compute_h's coset step: the inverse DIF scaled by g^j/n, then
            // DIT: x's interpolant P on the coset, y_k = P(g·ω^k) (naive
            // below 2^7); and back by the inverse coset step (g^−j/n)
            std::vector<S> y = x;
            regs_passes(y, d, d.twinv, true, stages, lgblock, d.gn2.data(), L);
            regs_passes(y, d, d.tw, false, stages, lgblock, (const S *)nullptr, L);
            if (logn <= 6) {
                S winv = inv(d.w), ninv = inv(mont<S>(d.n));
                std::vector<S> coef(d.n);
                for (u32 j = 0; j < d.n; j++) {
                    S acc = S::zero(), wj = S::one(), st = S::one();
                    for (u32 i = 0; i < j; i++) st = st * winv;
                    for (u32 i = 0; i < d.n; i++) acc = acc + x[i] * wj, wj = wj * st;
                    coef[j] = acc * ninv;
                }
                ok = true;
                S pt = d.g; // g·ω^k
                for (u32 k = 0; k < d.n; k++, pt = pt * d.w) {
                    S acc = S::zero(), pj = S::one();
                    for (u32 j = 0; j < d.n; j++) acc = acc + coef[j] * pj, pj = pj * pt;
                    ok = ok && y[k].eq(acc);
                }
                CHECK(ok, "bls coset evaluation logn=%d stages=%d block=2^%d", logn, stages, lgblock);
            }
            regs_passes(y, d, d.twinv, true, stages, lgblock, d.ginvn2.data(), L);
            regs_passes(y, d, d.tw, false, stages, lgblock, (const S *)nullptr, L);
            ok = true;
            for (u32 j = 0; j < d.n; j++) ok = ok && y[j].eq(x[j]);
            CHECK(ok, "bls coset round trip logn=%d stages=%d block=2^%d", logn, stages, lgblock);
        }
    CHECK(!L || !multi || high > 0, "bls regs logn=%d: no lazy element in [q, 2q) between passes", logn);
}

// test_regs_banks: in every round of every pass size, the eight threads of
// each quarter-warp (a 16-byte access is served eight threads at a time)
// read eight different 16-byte bank groups (slot mod 8): no conflicts. For
// the groups-across-lanes mapping (GL) the passes regs_lanes_ok admits, and
// there also the global ↔ shared copies: eight consecutive threads, four
// elements × two halves, plane 1 REGS_PLANE1 slots on (the copies of the
// other mapping: test_regs_copy_banks).
template <bool GL> void regs_banks(int s, int lgG) {
    u32 threads = 1u << (lgG + s - 3);
    for (int ri = 0; ri < regs_rounds(s); ri++) {
        int tt0 = 3 * ri, b0 = tt0 < s - 3 ? tt0 : s - 3; // DIT's windows; DIF's are the same set
        for (int difp = 0; difp < 2; difp++) {
            if (difp) {
                int tt1 = s - 3 * ri;
                b0 = tt1 > 3 ? tt1 - 3 : 0;
            }
            for (int i = 0; i < 8; i++)
                for (u32 t0 = 0; t0 < threads; t0 += 8) {
                    unsigned seen = 0;
                    for (u32 t = t0; t < t0 + 8 && t < threads; t++) {
                        u32 gi, tau;
                        regs_thread<GL>(t, s, gi, tau);
                        u32 lo = tau & ((1u << b0) - 1), hi = tau >> b0;
                        u32 K = (gi << s) | (hi << (b0 + 3)) | ((u32)i << b0) | lo;
                        seen |= 1u << (regs_slot_of<GL>(K, s) & 7);
                    }
                    u32 want = threads - t0 < 8 ? threads - t0 : 8;
                    CHECK((u32)__builtin_popcount(seen) == want, "regs banks gl=%d s=%d lgG=%d round %d dif=%d i=%d t0=%u: %d of %u",
                          GL, s, lgG, ri, difp, i, t0, __builtin_popcount(seen), want);
                }
        }
    }
}
// regs_copy_banks: the copies' bank groups for a pass of s stages, 2^lgG
// groups, mlow = 2^lgm; returns how many eight-thread runs conflict.
template <bool GL> int regs_copy_banks(int s, int lgG, int lgm) {
    u32 E = 1u << (lgG + s);
    int bad = 0;
    for (u32 q0 = 0; q0 < 2 * E; q0 += 8) {
        unsigned seen = 0;
        for (u32 q = q0; q < q0 + 8; q++) {
            u32 gi, k, h = q & 1;
            regs_elem(q >> 1, lgG, lgm, s, gi, k);
            seen |= 1u << ((h * (E + REGS_PLANE1) + regs_slot_of<GL>((gi << s) | k, s)) & 7);
        }
        bad += __builtin_popcount(seen) != 8;
    }
    return bad;
}
void test_regs_banks() {
    int lanes = 0;
    for (int s = 3; s <= 12; s++)
        for (int lgG : {0, 1, 2, 5}) {
            if (lgG + s > 12 && lgG > 0) continue;
            regs_banks<false>(s, lgG);
            for (int lgm = 0; lgm <= 16; lgm++)
                if (regs_lanes_ok(s, lgG, lgm)) {
                    regs_banks<true>(s, lgG);
                    int bad = regs_copy_banks<true>(s, lgG, lgm);
                    CHECK(bad == 0, "regs copy banks gl=1 s=%d lgG=%d lgm=%d: %d runs conflict", s, lgG, lgm, bad);
                    lanes++;
                }
        }
    CHECK(lanes > 0, "regs banks: no pass takes groups across lanes");
}
// test_regs_copy_banks: the copies of the default mapping in runs of four
// or more consecutive residues (mlow ≥ G ≥ 4), where REGS_PLANE1's comment
// promises all eight bank groups. Not for s = 4 and 5: there regs_slot
// folds the group's bits 0–1 (K bits 4–5) onto the bank bits the plane
// offset and the element's order use: every run conflicts, 2-way at s = 4
// and 4-way at s = 5 (found by this check; with the default 8 stages such
// passes come only in NTTs of 2^9 to 2^11 elements).
void test_regs_copy_banks() {
    for (int s = 3; s <= 12; s++)
        for (int lgG : {2, 3, 5})
            for (int lgm = lgG; lgm <= 16; lgm += 3) {
                if (lgG + s > 12 || s == 4 || s == 5) continue;
                int bad = regs_copy_banks<false>(s, lgG, lgm);
                CHECK(bad == 0, "regs copy banks gl=0 s=%d lgG=%d lgm=%d: %d runs conflict", s, lgG, lgm, bad);
            }
}

Fr horner(const std::vector<Fr> &coef_rev, const Dom &d, Fr z) {
    Fr r = Fr::zero();
    for (int j = (int)d.n - 1; j >= 0; j--) r = r * z + coef_rev[bitrev((u32)j, d.logn)];
    return r;
}

void test_ntt(int logn) {
    Dom d = make_dom(logn, mont<Fr>(5));
    std::vector<Fr> x(d.n);
    for (auto &v : x) v = fr_rnd();
    // DIF: y[bitrev(k)] = Σ x_i ω^{ik}
    std::vector<Fr> y = x;
    dif(y, d, d.tw);
    for (u32 k = 0; k < d.n; k++) {
        Fr s = Fr::zero(), wk = R<Fr>();
        for (u32 i = 0; i < k; i++) wk = wk * d.w;
        Fr p = R<Fr>();
        for (u32 i = 0; i < d.n; i++) s = s + x[i] * p, p = p * wk;
        CHECK(s.eq(y[bitrev(k, logn)]), "dif k=%u", k);
    }
    // DIT with ω⁻¹ and 1/n inverts it.
    dit(y, d, d.twinv);
    for (u32 i = 0; i < d.n; i++) CHECK((y[i] * d.ninv).eq(x[i]), "dit inverse %u", i);

    // H: satisfied constraints (c = a∘b), then A·B − C = H·Z at a random z.
    std::vector<Fr> a(d.n), b(d.n), c(d.n);
    for (u32 i = 0; i < d.n; i++) a[i] = fr_rnd(), b[i] = fr_rnd(), c[i] = a[i] * b[i];
    auto coef = [&](std::vector<Fr> v) {
        dif(v, d, d.twinv);
        for (auto &e : v) e = e * d.ninv;
        return v;
    };
    std::vector<Fr> ca = coef(a), cb = coef(b), cc = coef(c);
    std::vector<Fr> *xs[3] = {&a, &b, &c};
    for (auto p : xs) {
        dif(*p, d, d.twinv);
        scale_rev(*p, d, d.gn);
        dit(*p, d, d.tw);
    }
    Fr zg = pow(d.g, std::vector<u64>{d.n, 0, 0, 0}.data()) - R<Fr>();
    Fr zinv = inv(zg);
    for (u32 i = 0; i < d.n; i++) a[i] = (a[i] * b[i] - c[i]) * zinv;
    dif(a, d, d.twinv);
    scale_rev(a, d, d.ginvn);
    Fr z = fr_rnd();
    Fr zn = pow(z, std::vector<u64>{d.n, 0, 0, 0}.data()) - R<Fr>();
    Fr lhs = horner(ca, d, z) * horner(cb, d, z) - horner(cc, d, z);
    Fr rhs = horner(a, d, z) * zn;
    CHECK(lhs.eq(rhs), "H identity logn=%d", logn);
    CHECK(a[bitrev(d.n - 1, logn)].is_zero(), "deg h ≤ n−2");
}

// test_plan: MsmPlan's sizes at the boundary, without allocating: n = 2^27
// points with 16-bit windows is 2^31 digit slots, one more than an int holds
// (the overflow that (int)(n·nw) had).
static void test_plan() {
    const MsmTuning T{}; // zk_default_config's
    char err[ZK_ERR_BYTES];
    ErrScope es(err);
    MsmPlan p{};
    size_t n = (size_t)1 << 27;
    CHECK(msm_plan(n, T, &p) == 0, "plan 2^27: %s", err);
    CHECK(p.c == 16 && p.nw == 16, "2^27: c=%d nw=%d, want 16, 16", p.c, p.nw);
    CHECK(p.m == ((size_t)1 << 31), "2^27: m=%zu, want 2^31", p.m);
    CHECK(p.nb == 16u * 32768u, "2^27: nb=%u", p.nb);
    CHECK(p.sorts() == 2, "2^27: %d sorts, want 2 (15 windows, then 1)", p.sorts());
    size_t next = 0;
    for (int k = 0; k < p.sorts(); k++) {
        size_t off, items;
        p.sort_range(k, &off, &items);
        CHECK(off == next, "sort %d at %zu, want %zu", k, off, next);
        CHECK(items <= SORT_MAX_ITEMS && items % n == 0, "sort %d: %zu items", k, items);
        next = off + items;
    }
    CHECK(next == p.m, "sorts cover %zu of %zu slots", next, p.m);
    // the last digit slot, as digits_body computes it
    size_t last = (size_t)(p.nw - 1) * n + (n - 1);
    CHECK(last == p.m - 1 && p.m > 0x7fffffffULL, "last slot %zu", last);
    // level 0's chunk count stays a u32, and so does a sorted position
    CHECK(p.level_total(p.m) <= 0xffffffffULL, "level 0: %zu chunks", p.level_total(p.m));
    CHECK(p.m - 1 <= 0xffffffffULL, "positions");
    // launch grids: blocks of 256 over m fit an unsigned grid
    CHECK((p.m + 255) / 256 < 0x7fffffffULL, "grid");

    // the largest MSM: n = 2^28 − 1 (m < 2^32); 2^28 and 2^31 are refused,
    // with a message
    CHECK(msm_plan(((size_t)1 << 28) - 1, T, &p) == 0 && p.m == 16 * (((size_t)1 << 28) - 1), "2^28 − 1: %s", err);
    err[0] = 0;
    CHECK(msm_plan((size_t)1 << 28, T, &p) != 0 && strstr(err, "2^32") != nullptr, "2^28 accepted or no message: %s", err);
    err[0] = 0;
    CHECK(msm_plan((size_t)1 << 31, T, &p) != 0 && strstr(err, "2^31") != nullptr, "2^31 accepted or no message: %s", err);
    // small sizes: one sort of every window
    for (size_t m : {1, 2, 100, 1 << 20}) {
        CHECK(msm_plan(m, T, &p) == 0 && p.sorts() == 1, "n=%zu: %d sorts", m, p.sorts());
    }
    // tables: 2^20 bases → 16-bit windows, 16 of them; one set of buckets,
    // one sort, keys of c bits (the sentinel is half)
    int c = 0, nw = 0;
    CHECK(msm_table_layout((size_t)1 << 20, T, &c, &nw) == 0 && c == 16 && nw == 16, "table 2^20: c=%d nw=%d", c, nw);
    CHECK(msm_plan_table((size_t)1 << 20, c, nw, MSM_CHUNK, &p) == 0 && p.bw == 1 && p.nb == p.half && p.sorts() == 1 &&
              bitlen(p.nb) == c,
          "table plan 2^20: %s", err);
    // wider windows past 2^20 bases (msm_table_window): 2^21 → 19 bits, 14
    // windows; 2^22 and up → 20 bits, 13 windows
    CHECK(msm_table_layout((size_t)1 << 21, T, &c, &nw) == 0 && c == 19 && nw == 14, "table 2^21: c=%d nw=%d", c, nw);
    CHECK(msm_table_layout((size_t)1 << 22, T, &c, &nw) == 0 && c == 20 && nw == 13, "table 2^22: c=%d nw=%d", c, nw);
    CHECK(msm_table_layout((size_t)1 << 24, T, &c, &nw) == 0 && c == 20 && nw == 13, "table 2^24: c=%d nw=%d", c, nw);
    // BLS12-381 (wide windows): 20 bits from 2^19 bases, 16 at 2^20 as
    // BN254's; BN254 keeps msm_window's 15 bits at 2^19
    CHECK(msm_table_layout((size_t)1 << 19, T, &c, &nw) == 0 && c == 15 && nw == 17, "table 2^19: c=%d nw=%d", c, nw);
    CHECK(msm_table_layout<Bls12381Fp>((size_t)1 << 19, T, &c, &nw) == 0 && c == 20 && nw == 13,
          "BLS12-381 table 2^19: c=%d nw=%d", c, nw);
    CHECK(msm_table_layout<Bls12381Fp>(1000002, T, &c, &nw) == 0 && c == 20 && nw == 13,
          "BLS12-381 table 1000002: c=%d nw=%d", c, nw);
    CHECK(msm_table_layout<Bls12381Fp>((size_t)1 << 20, T, &c, &nw) == 0 && c == 16 && nw == 16,
          "BLS12-381 table 2^20: c=%d nw=%d", c, nw);
    CHECK(msm_table_layout<Bls12381Fp>(((size_t)1 << 19) - 1, T, &c, &nw) == 0 && c == 14,
          "BLS12-381 table 2^19-1: c=%d nw=%d", c, nw);
    // the scratch bound covers a table's plan where its one set of wide
    // buckets outweighs the plain plan's (BLS12-381's G2 at 10^6 bases)
    {
        size_t n = 1000002;
        size_t table = msm_plan_bytes<Bls12381Fp2>(n, 13, (size_t)1 << 19, MsmChunk<Bls12381Fp2>::value);
        size_t plain = msm_plan_bytes<Bls12381Fp2>(n, 18, (size_t)18 << 14, MsmChunk<Bls12381Fp2>::value);
        CHECK(table > plain && msm_scratch_bytes<Bls12381Fp2>(n, T) == table, "scratch bound at 10^6 G2 bases: %zu, table %zu, plain %zu",
              msm_scratch_bytes<Bls12381Fp2>(n, T), table, plain);
        CHECK(msm_scratch_bytes<Fp>(n, T) >= msm_plan_bytes<Fp>(n, 17, (size_t)1 << 14, MSM_CHUNK), "scratch bound BN254");
    }
    // 2^27 bases: 13·2^27 < 2^31 points, addressable; 2^28: refused
    CHECK(msm_table_layout((size_t)1 << 27, T, &c, &nw) == 0 && c == 20, "table 2^27: %s", err);
    // segments: 8 buckets up to 2^18 a set, then about 2^15 segments a set
    CHECK(msm_segment(1u << 15, 0) == 8 && msm_segment(1u << 18, 0) == 8 && msm_segment(1u << 19, 0) == 16 &&
              msm_segment(1u << 21, 0) == 64 && msm_segment(1u << 23, 0) == 256 && msm_segment(4, 0) == 4 &&
              msm_segment(1u << 21, 8) == 8,
          "msm_segment");
    // BLS12-381's G2 from 4 (MsmSegment), widened alike; the others from 8
    CHECK(msm_segment(1u << 15, 0, MsmSegment<Bls12381Fp2>::value) == 4 &&
              msm_segment(1u << 19, 0, MsmSegment<Bls12381Fp2>::value) == 16 &&
              msm_segment(1u << 15, 0, MsmSegment<Bls12381Fp>::value) == 8 &&
              msm_segment(1u << 15, 0, MsmSegment<Fp2>::value) == 8 && msm_segment(1u << 15, 2, 4) == 2,
          "msm_segment by group");
    err[0] = 0;
    CHECK(msm_table_layout((size_t)1 << 28, T, &c, &nw) != 0 && strstr(err, "2^31") != nullptr, "table 2^28: %s", err);
    // more digits than one sort takes are refused, not split (a bucket's
    // run would no longer be whole)
    err[0] = 0;
    CHECK(msm_plan_table(((size_t)1 << 27), 16, 16, MSM_CHUNK, &p) != 0 && strstr(err, "one sort") != nullptr,
          "table plan over one sort: %s", err);

    // batches: each vector its own bucket sets after the one before's, its
    // slots after the one before's (an empty vector has none), one sort
    // while the digits fit, the sentinel after every vector's keys
    size_t ns[3] = {100, 0, 37};
    CHECK(msm_plan_batch(ns, 3, 6, msm_windows(6), false, MSM_CHUNK, &p) == 0, "batch plan: %s", err);
    CHECK(p.k == 3 && p.nbv == (u32)p.nw * 32 && p.nb == 3 * p.nbv && p.bw == 3 * p.nw && p.n == 100, "batch sizes");
    CHECK(p.at[0] == 0 && p.at[1] == 100 * (size_t)p.nw && p.at[2] == p.at[1] && p.m == 137 * (size_t)p.nw,
          "batch slots");
    CHECK(p.sorts() == 1, "batch of 137 points: %d sorts", p.sorts());
    CHECK(msm_plan_batch(ns, 3, 16, 16, true, MSM_CHUNK, &p) == 0 && p.nbv == p.half && p.nb == 3 * p.half && p.bw == 3,
          "table batch: %s", err);
    // two vectors of 2^26 points, 16 windows: 2^31 digits in units of one
    // window, 2^26 each: 31 units in the first sort, the last in a second
    size_t big[2] = {(size_t)1 << 26, (size_t)1 << 26};
    CHECK(msm_plan_batch(big, 2, 16, 16, false, MSM_CHUNK, &p) == 0 && p.m == ((size_t)1 << 31), "2 × 2^26: %s", err);
    next = 0;
    for (int k = 0; k < p.sorts(); k++) {
        size_t off, items;
        p.sort_range(k, &off, &items);
        CHECK(off == next && items <= SORT_MAX_ITEMS && items % ((size_t)1 << 26) == 0, "batch sort %d", k);
        next = off + items;
    }
    CHECK(next == p.m && p.sorts() == 2, "batch sorts cover %zu of %zu in %d", next, p.m, p.sorts());
    // over a table, a vector's digits are one unit: 2^26 · 16 = 2^30 a sort
    CHECK(msm_plan_batch(big, 2, 16, 16, true, MSM_CHUNK, &p) == 0 && p.sorts() == 2, "table batch sorts: %d", p.sorts());
    // one run's digits stay below 2^32: three vectors of 2^27 are refused
    // by the plan (msm_run_batch splits such a batch into runs)
    size_t huge[3] = {(size_t)1 << 27, (size_t)1 << 27, (size_t)1 << 27};
    err[0] = 0;
    CHECK(msm_plan_batch(huge, 3, 16, 16, false, MSM_CHUNK, &p) != 0 && strstr(err, "2^32") != nullptr, "3 × 2^27: %s", err);
    size_t none[2] = {0, 0};
    err[0] = 0;
    CHECK(msm_plan_batch(none, 2, 6, msm_windows(6), false, MSM_CHUNK, &p) != 0 && strstr(err, "no points"), "empty batch");
    err[0] = 0;
    CHECK(msm_plan_batch(ns, MSM_MAX_BATCH + 1, 6, msm_windows(6), false, MSM_CHUNK, &p) != 0, "batch over the limit");
}

// test_config: zk_config into ContextConfig (driver.cuh): the zeroed and
// the default config are today's defaults; each field out of range fails,
// naming the field; a window reaches the plans and the table layout.
// level0_chunk widens level 0's tiles (up to twice the plan's chunk) to
// fill the fewest whole waves of the device's level0 threads, where tiles
// of 2L would take LEVEL0_MIN_WAVES waves or more; else, or where the
// device cannot say (slots 0), the plan's chunk.
static void test_level0_chunk() {
    const size_t h100 = 132 * 3 * 128; // BLS12-381 G1's level0: three blocks of 128 an SM
    struct {
        size_t m;
        u32 want;
    } cases[] = {{(size_t)16 << 20, 64},  // 2^20, 16 windows: 2 waves of 128, kept
                 {(size_t)13 << 22, 120}, // 2^22, 13 windows: 9 waves of 120
                 {(size_t)13 << 24, 127}, // 2^24, 20-bit windows: 34 waves
                 {(size_t)12 << 24, 125}, // 2^24, 22-bit windows: 32 waves
                 {1000, 64}};
    for (auto &c : cases)
        CHECK(level0_chunk(c.m, 64, h100) == c.want, "m %zu: %u, want %u", c.m, level0_chunk(c.m, 64, h100), c.want);
    CHECK(level0_chunk((size_t)13 << 24, 64, 0) == 64 && level0_chunk(0, 64, h100) == 64, "no slots or no pairs");
    u64 x = 88172645463325252ULL; // xorshift
    auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
    for (int i = 0; i < 20000; i++) {
        size_t slots = 1 + next() % 60000, m = 1 + next() % ((size_t)1 << 31);
        u32 L = 2 + (u32)(next() % 255);
        u32 r = level0_chunk(m, L, slots);
        size_t waves = (m + 2 * (size_t)L * slots - 1) / (2 * (size_t)L * slots);
        CHECK(r >= L && r <= 2 * L, "m %zu L %u slots %zu: %u", m, L, slots, r);
        if (waves < LEVEL0_MIN_WAVES) {
            CHECK(r == L, "m %zu L %u slots %zu (%zu waves): %u", m, L, slots, waves, r);
        } else if (r > L) { // the narrowest tiles that fill those waves
            CHECK((m + r - 1) / r <= waves * slots && (m + r - 2) / (r - 1) > waves * slots, "m %zu L %u slots %zu: %u",
                  m, L, slots, r);
        }
    }
}

// test_bitsum_per: k_bitsum's items a block (msm.cuh, bitsum_per) at the
// H100's measured cases and over random sets of classes.
static void test_bitsum_per() {
    CHECK(bitsum_per(1u << 12, 13, 1) == 256, "2^15 buckets, S 8: %u", bitsum_per(1u << 12, 13, 1));
    CHECK(bitsum_per(1u << 15, 16, 1) == 2048, "2^19 buckets, S 16: %u", bitsum_per(1u << 15, 16, 1));
    CHECK(bitsum_per(1u << 14, 15, 1) == 512, "2^14 segments: %u", bitsum_per(1u << 14, 15, 1));
    CHECK(bitsum_per(8, 4, 1) == 8, "8 segments: %u", bitsum_per(8, 4, 1));
    u64 x = 0x9E3779B97F4A7C15ULL;
    auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
    for (int i = 0; i < 20000; i++) {
        u32 spw = 1u << (next() % 24), K = bit_classes(spw), sets = 1 + (u32)(next() % 64);
        u32 per = bitsum_per(spw, K, sets), base = spw < BITSUM_PER ? spw : BITSUM_PER;
        auto blocks = [&](u32 p) { return (size_t)sets * K * (spw / p); };
        CHECK((per & (per - 1)) == 0 && per >= base && per <= spw && per <= BITSUM_PER_MAX, "spw %u sets %u: %u", spw,
              sets, per);
        CHECK(per == base || blocks(per) >= BITSUM_MIN_BLOCKS, "spw %u sets %u: %u, %zu blocks", spw, sets, per,
              blocks(per));
        CHECK(per * 2 > BITSUM_PER_MAX || per * 2 > spw || blocks(per * 2) < BITSUM_MIN_BLOCKS,
              "spw %u sets %u: %u could double", spw, sets, per);
    }
}

static void test_config() {
    char err[ZK_ERR_BYTES];
    ErrScope es(err);
    zk_config def;
    zk_default_config(&def);
    ContextConfig cc;
    CHECK(def.config_bytes == sizeof(zk_config), "default config: %u bytes", def.config_bytes);
    CHECK(context_config_of(&def, &cc) == 0, "default config refused: %s", err);
    CHECK(cc.poll_us == WAIT_POLL_US, "default waits: poll every %d µs", cc.poll_us);
    {
        zk_config b = def, e = def;
        b.wait_poll_us = -1;
        e.wait_poll_us = 7;
        ContextConfig cb, ce;
        CHECK(context_config_of(&b, &cb) == 0 && cb.poll_us == 0 && context_config_of(&e, &ce) == 0 && ce.poll_us == 7,
              "wait_poll_us -1 and 7: %d and %d", cb.poll_us, ce.poll_us);
    }
    CHECK(cc.msm.window == 0 && cc.msm.chunk == 0 && cc.msm.segment == 0 && !cc.spin,
          "default config: window %d chunk %u segment %u spin %d", cc.msm.window, cc.msm.chunk, cc.msm.segment, cc.spin);
    CHECK(context_config_of(nullptr, &cc) == 0 && cc.msm.chunk == 0, "no config: not the defaults");
    // the chunk by group: BLS12-381's G2 sums 128 points a thread, its G1 64, BN254's 32
    // (MsmChunk); a configured chunk is every group's
    CHECK(msm_chunk<Fp>(cc.msm) == MSM_CHUNK && msm_chunk<Fp2>(cc.msm) == MSM_CHUNK &&
              msm_chunk<Bls12381Fp>(cc.msm) == 64 && msm_chunk<Bls12381Fp2>(cc.msm) == 128,
          "default chunks: %u %u %u %u", msm_chunk<Fp>(cc.msm), msm_chunk<Fp2>(cc.msm), msm_chunk<Bls12381Fp>(cc.msm),
          msm_chunk<Bls12381Fp2>(cc.msm));
    {
        MsmPlan p{};
        CHECK(msm_plan<Bls12381Fp2>(1000, cc.msm, &p) == 0 && p.chunk == 128, "BLS12-381 G2 plan: chunk %u", p.chunk);
        CHECK(msm_plan<Bls12381Fp>(1000, cc.msm, &p) == 0 && p.chunk == 64, "BLS12-381 G1 plan: chunk %u", p.chunk);
    }
    zk_config small = def;
    small.config_bytes = 8;
    CHECK(context_config_of(&small, &cc) != 0 && strstr(err, "bytes"), "a short zk_config accepted: %s", err);
    struct {
        const char *field;
        zk_config c;
    } bad[] = {{"msm_window", def}, {"msm_window", def}, {"msm_chunk", def}, {"msm_chunk", def},
               {"msm_segment", def}, {"msm_segment", def}, {"spin", def}, {"wait_poll_us", def},
               {"wait_poll_us", def}, {"msm_piece_log", def}, {"msm_piece_log", def}};
    bad[0].c.msm_window = 3;
    bad[1].c.msm_window = MSM_MAX_WINDOW + 1;
    bad[2].c.msm_chunk = 1;
    bad[3].c.msm_chunk = 257;
    bad[4].c.msm_segment = 12;
    bad[5].c.msm_segment = 512;
    bad[6].c.spin = 2;
    bad[7].c.wait_poll_us = -2;
    bad[8].c.wait_poll_us = WAIT_POLL_US_MAX + 1;
    bad[9].c.msm_piece_log = MSM_PIECE_LOG_MIN - 1;
    bad[10].c.msm_piece_log = MSM_PIECE_LOG_MAX + 1;
    for (auto &b : bad) {
        err[0] = 0;
        CHECK(context_config_of(&b.c, &cc) != 0 && strstr(err, b.field), "config %s out of range accepted: %s", b.field,
              err);
    }
    zk_config w = def;
    w.msm_window = 22;
    w.msm_chunk = 8;
    w.msm_segment = 16;
    w.spin = 1;
    CHECK(context_config_of(&w, &cc) == 0 && cc.msm.window == 22 && cc.msm.chunk == 8 && cc.msm.segment == 16 && cc.spin,
          "config 22/8/16/spin: %s", err);
    MsmPlan p{};
    CHECK(msm_plan(100, cc.msm, &p) == 0 && p.c == 22 && p.chunk == 8 && p.half == 1u << 21, "window 22: plan c=%d", p.c);
    CHECK(msm_plan<Bls12381Fp2>(100, cc.msm, &p) == 0 && p.chunk == 8, "chunk 8 not BLS12-381 G2's: %u", p.chunk);
    int c = 0, nw = 0;
    CHECK(msm_table_layout(1000, cc.msm, &c, &nw) == 0 && c == 22 && nw == msm_windows(22), "window 22: table c=%d", c);
    CHECK(msm_segment(1u << 21, cc.msm.segment) == 16, "segment 16 not taken");
    CHECK(msm_scratch_bytes<Fp>(100, cc.msm) > msm_scratch_bytes<Fp>(100, MsmTuning{}),
          "a window of 2^21 buckets a set plans no more scratch than 100 points' own");
    // pieces: past 2^24 scalars a run holds a piece's digits, so a 2^27
    // MSM's scratch is a 2^24 one's (it was 48 GiB), under 7 GiB in every group
    {
        MsmTuning d{};
        for (size_t b : {msm_scratch_bytes<Fp>(1u << 27, d), msm_scratch_bytes<Fp2>(1u << 27, d),
                         msm_scratch_bytes<Bls12381Fp>(1u << 27, d), msm_scratch_bytes<Bls12381Fp2>(1u << 27, d)})
            CHECK(b < (size_t)7 << 30, "2^27 scalars plan %zu bytes of scratch", b);
        CHECK(msm_scratch_bytes<Bls12381Fp>(1u << 27, d) == msm_scratch_bytes<Bls12381Fp>(1u << 24, d),
              "2^27 in pieces: %zu against 2^24's %zu", msm_scratch_bytes<Bls12381Fp>(1u << 27, d),
              msm_scratch_bytes<Bls12381Fp>(1u << 24, d));
        zk_config pc = def;
        pc.msm_piece_log = 20;
        CHECK(context_config_of(&pc, &cc) == 0 && msm_piece(cc.msm) == (size_t)1 << 20, "piece 2^20 not taken");
        CHECK(msm_scratch_bytes<Fp>(1u << 24, cc.msm) * 12 < msm_scratch_bytes<Fp>(1u << 24, d),
              "pieces of 2^20: %zu, not a sixteenth of 2^24's %zu", msm_scratch_bytes<Fp>(1u << 24, cc.msm),
              msm_scratch_bytes<Fp>(1u << 24, d));
    }
}

int main() {
    test_config();
    test_level0_chunk();
    test_bitsum_per();
    test_plan();
    test_field();
    test_fields_by_params();
    test_curve();
    test_curves_by_traits();
    test_lazy_curve();
    test_ones();
    for (size_t n : {1, 2, 3, 17, 100, 300})
        for (u32 L : {2u, 32u}) test_msm(n, L, false, 0);
    test_msm(150, 4, true, 0);
    test_msm(200, 4, false, 1);
    test_msm(200, 32, true, 1);
    test_msm(64, 3, false, 2);
    test_msm(2100, 32, true, 0); // c = 7: two segments per window
    test_reduce_buckets<Fp>("bn254 G1", make_bases(1)[0]);
    for (int logn : {1, 2, 3, 5}) test_ntt(logn);
    for (int logn : {0, 1, 2, 3, 4, 5, 7, 10}) test_passes(logn);
    for (int logn : {3, 4, 5, 6, 7, 8, 9, 11, 13, 14}) test_regs(logn);
    test_regs_lanes(12, 6, 8, 1);
    test_regs_lanes(14, 7, 9, 1);
    test_regs_lanes(16, 8, 10, 1);
    test_regs_lanes(18, 6, 8, 2);
    test_regs_banks();
    test_regs_copy_banks();
    test_bls12381_msm();
    for (int logn : {1, 2, 3, 4, 6, 9, 11}) test_bls12381_ntt(logn);
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("hosttest: ok\n");
    return 0;
}
