// field.cuh — BN254's Montgomery fields for zkpipe's CUDA backend: Fr, Fp
// (4×64-bit limbs, the same layout and Montgomery form as gnark-crypto's
// fr.Element and fp.Element) and Fp2 (gnark's E2).
//
// Host+device code: hosttest.cpp and the host stand-in (hostlib.cpp) build it
// with g++; zkpipe.cu with nvcc.
#pragma once

#include <stdint.h>
#include <stddef.h>

#include "ptx.cuh"

// ZK_FIELD_MUL selects the product: 32 (eight 32-bit limbs, PTX carry
// chains: the default) or 64 (four 64-bit limbs, the first version, kept as
// the reference hosttest checks against).
#ifndef ZK_FIELD_MUL
#define ZK_FIELD_MUL 32
#endif

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

    // ---- four 64-bit limbs: the first version, kept as the reference ----

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

    HD static Field add64(const Field &a, const Field &b) {
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

    HD static Field sub64(const Field &a, const Field &b) {
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

    // Montgomery product a·b·2⁻²⁵⁶ mod q: CIOS without the extra carry
    // words, valid because q's top limb is below 2⁶³ − 1 (gnark's "no-carry"
    // variant), then one conditional subtraction.
    HD static Field mul64(const Field &a, const Field &b) {
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

    // ---- eight 32-bit limbs in PTX carry chains (ptx.cuh) ----
    //
    // The same bits as v (little-endian limbs), split into registers. The
    // product is the even/odd CIOS of sppark's mont_t: the products a_j·b_i
    // of even j and of odd j accumulate in two arrays, so every carry chain
    // is one unbroken run of mad.lo.cc/madc.hi.cc, and the two merge once at
    // the end. It needs q < 2^254 (two spare bits), which both fields have:
    // the chains that drop their last carry cannot carry there.

    HD static u32 q32(int i) { return (i & 1) ? (u32)(q(i >> 1) >> 32) : (u32)q(i >> 1); }

    HD void split(u32 x[8]) const {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            x[2 * i] = (u32)v[i];
            x[2 * i + 1] = (u32)(v[i] >> 32);
        }
    }
    HD static Field join(const u32 x[8]) {
        Field r;
#pragma unroll
        for (int i = 0; i < 4; i++) r.v[i] = ((u64)x[2 * i + 1] << 32) | x[2 * i];
        return r;
    }

    // sub_q_if_ge: x ← x − q if x ≥ q (x < 2q).
    HD static void sub_q_if_ge(u32 x[8]) {
        u32 cc = 0, t[8];
        t[0] = sub_cc(x[0], q32(0), cc);
#pragma unroll
        for (int i = 1; i < 8; i++) t[i] = subc_cc(x[i], q32(i), cc);
        u32 borrow = subc(0, 0, cc); // 0 or 0xffffffff
#pragma unroll
        for (int i = 0; i < 8; i++) x[i] = borrow ? x[i] : t[i];
    }

    HD static Field add32(const Field &a, const Field &b) {
        u32 x[8], y[8], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = add_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < 7; i++) x[i] = addc_cc(x[i], y[i], cc);
        x[7] = addc(x[7], y[7], cc); // a + b < 2^255: no carry out
        sub_q_if_ge(x);
        return join(x);
    }

    HD static Field sub32(const Field &a, const Field &b) {
        u32 x[8], y[8], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = sub_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < 8; i++) x[i] = subc_cc(x[i], y[i], cc);
        u32 mask = subc(0, 0, cc); // all ones if a < b: add q back
        x[0] = add_cc(x[0], q32(0) & mask, cc);
#pragma unroll
        for (int i = 1; i < 7; i++) x[i] = addc_cc(x[i], q32(i) & mask, cc);
        x[7] = addc(x[7], q32(7) & mask, cc);
        return join(x);
    }

    // redc_row: one row of the even/odd CIOS: acc += a·bi, then one
    // Montgomery step (mi = acc₀·(−q⁻¹) mod 2³², acc += q·mi), shifting one
    // limb. even/odd swap roles from row to row.
    HD static void redc_row(u32 even[8], u32 odd[8], const u32 a[8], u32 bi, bool first) {
        u32 cc = 0;
        if (first) {
#pragma unroll
            for (int j = 0; j < 8; j += 2) {
                odd[j] = mul_lo(a[j + 1], bi);
                odd[j + 1] = mul_hi(a[j + 1], bi);
            }
#pragma unroll
            for (int j = 0; j < 8; j += 2) {
                even[j] = mul_lo(a[j], bi);
                even[j + 1] = mul_hi(a[j], bi);
            }
        } else {
            even[0] = add_cc(even[0], odd[1], cc);
            // odd ← odd>>2 limbs + odd-limb products, in the same chain
#pragma unroll
            for (int j = 0; j < 6; j += 2) {
                odd[j] = madc_lo_cc(a[j + 1], bi, odd[j + 2], cc);
                odd[j + 1] = madc_hi_cc(a[j + 1], bi, odd[j + 3], cc);
            }
            odd[6] = madc_lo_cc(a[7], bi, 0, cc);
            odd[7] = madc_hi(a[7], bi, 0, cc);
            even[0] = mad_lo_cc(a[0], bi, even[0], cc);
            even[1] = madc_hi_cc(a[0], bi, even[1], cc);
#pragma unroll
            for (int j = 2; j < 8; j += 2) {
                even[j] = madc_lo_cc(a[j], bi, even[j], cc);
                even[j + 1] = madc_hi_cc(a[j], bi, even[j + 1], cc);
            }
            odd[7] = addc(odd[7], 0, cc);
        }
        reduce_step(even, odd);
    }

    // reduce_step: the Montgomery step that ends a row: mi = acc₀·(−q⁻¹)
    // mod 2³², acc += q·mi (odd limbs of q into odd, even into even).
    HD static void reduce_step(u32 even[8], u32 odd[8]) {
        u32 cc = 0;
        u32 mi = even[0] * (u32)P::INV;
        odd[0] = mad_lo_cc(q32(1), mi, odd[0], cc);
        odd[1] = madc_hi_cc(q32(1), mi, odd[1], cc);
#pragma unroll
        for (int j = 2; j < 8; j += 2) {
            odd[j] = madc_lo_cc(q32(j + 1), mi, odd[j], cc);
            odd[j + 1] = madc_hi_cc(q32(j + 1), mi, odd[j + 1], cc);
        }
        even[0] = mad_lo_cc(q32(0), mi, even[0], cc);
        even[1] = madc_hi_cc(q32(0), mi, even[1], cc);
#pragma unroll
        for (int j = 2; j < 8; j += 2) {
            even[j] = madc_lo_cc(q32(j), mi, even[j], cc);
            even[j + 1] = madc_hi_cc(q32(j), mi, even[j + 1], cc);
        }
        odd[7] = addc(odd[7], 0, cc);
    }

    // mont32: the even/odd CIOS rows and their merge, without the final
    // subtraction: r = (x·y + M·q)/2^256, M the unique M < 2^256 with
    // x·y + M·q ≡ 0 mod 2^256 (mul_lazy's comment: the bounds).
    HD static void mont32(const u32 x[8], const u32 y[8], u32 even[8]) {
        u32 odd[8], cc = 0;
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
            redc_row(even, odd, x, y[i], i == 0);
            redc_row(odd, even, x, y[i + 1], false);
        }
        even[0] = add_cc(even[0], odd[1], cc);
#pragma unroll
        for (int j = 1; j < 7; j++) even[j] = addc_cc(even[j], odd[j + 1], cc);
        even[7] = addc(even[7], 0, cc);
    }

    // mul32: the canonical product; its inputs may be canonical or lazy (in
    // [0, 2q)): mont32 returns < 2q for both (mul_lazy), so one conditional
    // subtraction of q gives [0, q).
    HD static Field mul32(const Field &a, const Field &b) {
        u32 x[8], y[8], r[8];
        a.split(x);
        b.split(y);
        mont32(x, y, r);
        sub_q_if_ge(r);
        return join(r);
    }

    // ---- lazy reduction: elements in [0, 2q) (the regs NTT; eager left in ABI 9: notes/cuda-variants.md) ----
    //
    // Both fields have q < 2^254, so 4q < 2^256 = R: a sum of two elements
    // below 2q fits eight limbs, and a Montgomery product of two of them
    // comes out below 2q with no final subtraction. Values stay in [0, 2q)
    // between operations; reduce_2q (or mul32) makes one canonical.
    //
    // mul_lazy(a, b), a, b < 2q: mont32 without the final subtraction.
    //
    // (1) The result is < 2q. mont32 computes T = (a·b + M·q)/R exactly when
    // no carry is lost (2), with M < R: T < (4q² + R·q)/R = q·(1 + 4q/R) <
    // 2q, as 4q < R. (It needs only a·b < q·R: with b a canonical twiddle, a
    // may be up to 4q.)
    //
    // (2) No carry is lost. Write the accumulator as E + 2^32·O, E the even
    // array (limb k of weight 2^32k), O the odd one (limb k of weight
    // 2^32(k+1)), each eight limbs. A carry is dropped only out of O's top
    // (weight 2^288): the madc_hi that ends redc_row's odd chain, the
    // addc(odd[7], 0) after each even chain, and reduce_step's odd chain
    // whose carry out the even chain's opening mad.lo.cc (no carry in)
    // discards; and at the merge's top (weight 2^256). E's own carries out
    // all go into odd[7] (weight 2^256), never lost. After a row i > 0 has
    // added a·b_i and q·m_i, O (in units of 2^32) is at most
    //     ⌊E'/2^64⌋ + 1              (the previous row's E, shifted by the
    //                                 roles' swap, and the carry of
    //                                 even[0] += odd[1])
    //   + A_o·b_i + Q_o·m_i         (a's and q's odd limbs, A_o =
    //                                 Σ_k a_(2k+1)·2^64k < (a_7 + 1)·2^192)
    //   + 2·2^224                   (the two even chains' carries into odd[7])
    //   < 2^192 + 1 + (a_7 + 1 + q_7 + 1 + 2)·2^224 ≤ (a_7 + q_7 + 5)·2^224,
    // with b_i, m_i < 2^32 and a_7, q_7 the top 32-bit limbs; the first row
    // has less. Every partial sum of that chain is below the total, so none
    // reaches 2^256 (no carry out of O's top) while a_7 + q_7 + 5 ≤ 2^32:
    // q < 2^254 gives q_7 < 2^30, and a < 2q gives a_7 ≤ 2·q_7 + 1, so
    // a_7 + q_7 + 5 < 3·2^30 + 6 < 2^32 (Fr: 0x60c89ce5 + 0x30644e72 + 5 =
    // 0x912ceb5c; a < 4q would pass too). b only enters through b_i < 2^32.
    // The merge's top carry is 0 since its sum is T < 2q < 2^256.
    //
    // hosttest (test_lazy) checks mul_lazy against an exact wide Montgomery
    // reduction (redc_ref: 512-bit product, M, shift; no chains) on edges
    // and random values in [0, 2q) and a in [0, 4q), so a dropped carry
    // there fails it (dropping reduce_step's or redc_row's addc(odd[7], 0),
    // or the carry of redc_row's even[0] += odd[1], does: tried).
    static_assert((P::Q3 >> 62) == 0, "lazy reduction needs q < 2^254");

    // q2: the limbs of 2q (< 2^255).
    HD static u64 q2(int i) { return (q(i) << 1) | (i ? q(i - 1) >> 63 : 0); }
    HD static u32 q2_32(int i) { return (i & 1) ? (u32)(q2(i >> 1) >> 32) : (u32)q2(i >> 1); }

    HD static Field mul_lazy(const Field &a, const Field &b) {
        u32 x[8], y[8], r[8];
        a.split(x);
        b.split(y);
        mont32(x, y, r);
        return join(r);
    }

    // add_lazy2q: a + b, less 2q if that is ≥ 2q (a, b < 2q: a + b < 4q <
    // 2^256, no carry out; the result < 2q).
    HD static Field add_lazy2q(const Field &a, const Field &b) {
        u32 x[8], y[8], t[8], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = add_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < 7; i++) x[i] = addc_cc(x[i], y[i], cc);
        x[7] = addc(x[7], y[7], cc); // a + b < 4q < 2^256: no carry out
        t[0] = sub_cc(x[0], q2_32(0), cc);
#pragma unroll
        for (int i = 1; i < 8; i++) t[i] = subc_cc(x[i], q2_32(i), cc);
        u32 borrow = subc(0, 0, cc); // all ones if a + b < 2q: keep it
#pragma unroll
        for (int i = 0; i < 8; i++) x[i] = borrow ? x[i] : t[i];
        return join(x);
    }

    // sub_lazy2q: a − b, plus 2q if that borrowed (a, b < 2q: a − b is in
    // (−2q, 2q); the result in [0, 2q)). The add chain's carry out is the
    // borrow's 2^256 and is dropped.
    HD static Field sub_lazy2q(const Field &a, const Field &b) {
        u32 x[8], y[8], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = sub_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < 8; i++) x[i] = subc_cc(x[i], y[i], cc);
        u32 mask = subc(0, 0, cc); // all ones if a < b: add 2q back
        x[0] = add_cc(x[0], q2_32(0) & mask, cc);
#pragma unroll
        for (int i = 1; i < 7; i++) x[i] = addc_cc(x[i], q2_32(i) & mask, cc);
        x[7] = addc(x[7], q2_32(7) & mask, cc);
        return join(x);
    }

    // reduce_2q: the canonical value of a lazy one (x < 2q → x mod q).
    HD static Field reduce_2q(const Field &a) {
        u32 x[8];
        a.split(x);
        sub_q_if_ge(x);
        return join(x);
    }

    // sqr32: the square as a 512-bit product (each cross product a_i·a_j,
    // i < j, once, doubled, plus the diagonal a_i²: 36 limb products instead
    // of 64), then a Montgomery reduction of its low half plus its high half.
    // Rows as in sppark's mont_t::wide_t.

    // cmad: x[j] += a[j·2]·bi for the pairs (lo, hi) of k limbs, one chain
    // with carry out; `stride` 2 reads a's every other limb.
    HD static void cmad(u32 *x, const u32 *a, u32 bi, int k, u32 &cc) {
        x[0] = mad_lo_cc(a[0], bi, x[0], cc);
        x[1] = madc_hi_cc(a[0], bi, x[1], cc);
#pragma unroll
        for (int j = 2; j < k; j += 2) {
            x[j] = madc_lo_cc(a[j], bi, x[j], cc);
            x[j + 1] = madc_hi_cc(a[j], bi, x[j + 1], cc);
        }
    }
    HD static void mul_pairs(u32 *x, const u32 *a, u32 bi, int k) {
#pragma unroll
        for (int j = 0; j < k; j += 2) {
            x[j] = mul_lo(a[j], bi);
            x[j + 1] = mul_hi(a[j], bi);
        }
    }
    // sq_row_even/odd: one row of cross products a[i+1..]·a[i] into the
    // two accumulators (sppark's mad_row and qad_row).
    HD static void sq_row_a(u32 *x, u32 *y, const u32 *a, u32 bi, int k) {
        u32 cc = 0;
        cmad(x, a + 1, bi, k - 2, cc);
        x[k - 2] = madc_lo_cc(a[k - 1], bi, 0, cc);
        x[k - 1] = madc_hi(a[k - 1], bi, 0, cc);
        cmad(y, a, bi, k, cc);
        x[k - 1] = addc(x[k - 1], 0, cc);
    }
    HD static void sq_row_b(u32 *x, u32 *y, const u32 *a, u32 bi, int k) {
        u32 cc = 0;
        cmad(x, a, bi, k - 2, cc);
        x[k - 2] = madc_lo_cc(a[k - 2], bi, 0, cc);
        x[k - 1] = madc_hi(a[k - 2], bi, 0, cc);
        cmad(y, a + 1, bi, k - 2, cc);
        x[k - 1] = addc(x[k - 1], 0, cc);
    }
    // reduce_row: one Montgomery step of mul_by_1 (no product row).
    HD static void reduce_row(u32 even[8], u32 odd[8], bool first) {
        u32 cc = 0, mi;
        if (first) {
            mi = even[0] * (u32)P::INV;
#pragma unroll
            for (int j = 0; j < 8; j += 2) {
                odd[j] = mul_lo(q32(j + 1), mi);
                odd[j + 1] = mul_hi(q32(j + 1), mi);
            }
        } else {
            even[0] = add_cc(even[0], odd[1], cc);
            mi = even[0] * (u32)P::INV;
#pragma unroll
            for (int j = 0; j < 6; j += 2) {
                odd[j] = madc_lo_cc(q32(j + 1), mi, odd[j + 2], cc);
                odd[j + 1] = madc_hi_cc(q32(j + 1), mi, odd[j + 3], cc);
            }
            odd[6] = madc_lo_cc(q32(7), mi, 0, cc);
            odd[7] = madc_hi(q32(7), mi, 0, cc);
        }
        even[0] = mad_lo_cc(q32(0), mi, even[0], cc);
        even[1] = madc_hi_cc(q32(0), mi, even[1], cc);
#pragma unroll
        for (int j = 2; j < 8; j += 2) {
            even[j] = madc_lo_cc(q32(j), mi, even[j], cc);
            even[j + 1] = madc_hi_cc(q32(j), mi, even[j + 1], cc);
        }
        odd[7] = addc(odd[7], 0, cc);
    }

    HD static Field sqr32(const Field &x) {
        u32 a[8], w[16], odd[14], cc = 0;
        x.split(a);
        // cross products a_i·a_j, i < j
        mul_pairs(w + 2, a + 2, a[0], 6);
        mul_pairs(odd, a + 1, a[0], 8);
        sq_row_a(w + 4, odd + 2, a + 2, a[1], 6);
        sq_row_b(odd + 4, w + 6, a + 3, a[2], 6);
        sq_row_a(w + 8, odd + 6, a + 4, a[3], 4);
        sq_row_b(odd + 8, w + 10, a + 5, a[4], 4);
        w[12] = mul_lo(a[7], a[5]);
        w[13] = mul_hi(a[7], a[5]);
        odd[10] = mad_lo_cc(a[6], a[5], odd[10], cc);
        odd[11] = madc_hi_cc(a[6], a[5], odd[11], cc);
        w[13] = addc(w[13], 0, cc);
        odd[12] = mul_lo(a[7], a[6]);
        odd[13] = mul_hi(a[7], a[6]);
        // merge w[2..] and odd[1..]
        w[2] = add_cc(w[2], odd[1], cc);
#pragma unroll
        for (int j = 3; j < 14; j++) w[j] = addc_cc(w[j], odd[j - 1], cc);
        w[14] = addc(odd[13], 0, cc);
        // double
        w[0] = 0;
        w[1] = add_cc(odd[0], odd[0], cc);
#pragma unroll
        for (int j = 2; j < 15; j++) w[j] = addc_cc(w[j], w[j], cc);
        w[15] = addc(0, 0, cc);
        // diagonal
        w[0] = mad_lo_cc(a[0], a[0], w[0], cc);
        w[1] = madc_hi_cc(a[0], a[0], w[1], cc);
#pragma unroll
        for (int i = 1; i < 8; i++) {
            w[2 * i] = madc_lo_cc(a[i], a[i], w[2 * i], cc);
            w[2 * i + 1] = madc_hi_cc(a[i], a[i], w[2 * i + 1], cc);
        }
        // low half · 2⁻²⁵⁶ (mul_by_1), plus the high half
        u32 *even = w, red[8];
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
            reduce_row(even, red, i == 0);
            reduce_row(red, even, false);
        }
        even[0] = add_cc(even[0], red[1], cc);
#pragma unroll
        for (int j = 1; j < 7; j++) even[j] = addc_cc(even[j], red[j + 1], cc);
        even[7] = addc(even[7], 0, cc);
        even[0] = add_cc(even[0], w[8], cc);
#pragma unroll
        for (int j = 1; j < 7; j++) even[j] = addc_cc(even[j], w[8 + j], cc);
        even[7] = addc(even[7], w[15], cc);
        sub_q_if_ge(even);
        return join(even);
    }

    // dot32: a·b + c·d with one Montgomery reduction (sppark's
    // dot_n_redc): both products accumulate in the same even/odd rows
    // before each row's reduction step. Needs q < 2^254 as mul32 does; the
    // sum before the final subtraction stays below 2q (a·b + c·d < 2q² and
    // q < R/4).
    HD static void dot_row(u32 even[8], u32 odd[8], const u32 a[8], u32 bi, const u32 c[8], u32 di, bool first) {
        u32 cc = 0;
        if (first) {
            mul_pairs(odd, a + 1, bi, 8);
            cmad(odd, c + 1, di, 8, cc);
            mul_pairs(even, a, bi, 8);
            cmad(even, c, di, 8, cc);
            odd[7] = addc(odd[7], 0, cc);
        } else {
            even[0] = add_cc(even[0], odd[1], cc);
#pragma unroll
            for (int j = 0; j < 6; j += 2) {
                odd[j] = madc_lo_cc(a[j + 1], bi, odd[j + 2], cc);
                odd[j + 1] = madc_hi_cc(a[j + 1], bi, odd[j + 3], cc);
            }
            odd[6] = madc_lo_cc(a[7], bi, 0, cc);
            odd[7] = madc_hi(a[7], bi, 0, cc);
            cmad(odd, c + 1, di, 8, cc);
            cmad(even, a, bi, 8, cc);
            odd[7] = addc(odd[7], 0, cc);
            cmad(even, c, di, 8, cc);
            odd[7] = addc(odd[7], 0, cc);
        }
        reduce_step(even, odd);
    }

    HD static Field dot32(const Field &a, const Field &b, const Field &c, const Field &d) {
        u32 x[8], y[8], z[8], w[8], even[8], odd[8], cc = 0;
        a.split(x);
        b.split(y);
        c.split(z);
        d.split(w);
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
            dot_row(even, odd, x, y[i], z, w[i], i == 0);
            dot_row(odd, even, x, y[i + 1], z, w[i + 1], false);
        }
        even[0] = add_cc(even[0], odd[1], cc);
#pragma unroll
        for (int j = 1; j < 7; j++) even[j] = addc_cc(even[j], odd[j + 1], cc);
        even[7] = addc(even[7], 0, cc);
        sub_q_if_ge(even);
        return join(even);
    }

    // ---- the operators, by ZK_FIELD_MUL ----
#if ZK_FIELD_MUL == 64
    HD friend Field operator+(const Field &a, const Field &b) { return add64(a, b); }
    HD friend Field operator-(const Field &a, const Field &b) { return sub64(a, b); }
    HD friend Field operator*(const Field &a, const Field &b) { return mul64(a, b); }
#else
    HD friend Field operator+(const Field &a, const Field &b) { return add32(a, b); }
    HD friend Field operator-(const Field &a, const Field &b) { return sub32(a, b); }
    HD friend Field operator*(const Field &a, const Field &b) { return mul32(a, b); }
#endif

    HD Field neg() const {
        if (is_zero()) return *this;
        return zero() - *this;
    }

    HD Field dbl() const { return *this + *this; }

#if ZK_FIELD_MUL == 64
    HD Field sqr() const { return mul64(*this, *this); }
#else
    HD Field sqr() const { return sqr32(*this); }
#endif

    // inv: x^(q−2) = x⁻¹ (Fermat; 0 for 0), square-and-multiply from the
    // top bit of q − 2 down. Precomputation only: ≈ 250 squares and 130
    // products.
    HD Field inv() const {
        u64 e[4] = {(u64)P::Q0 - 2, (u64)P::Q1, (u64)P::Q2, (u64)P::Q3}; // q's low limb is > 2
        Field r = *this;                                                 // bit 253, q − 2's top bit
        for (int i = 252; i >= 0; i--) {
            r = r.sqr();
            if ((e[i >> 6] >> (i & 63)) & 1) r = r * *this;
        }
        return r;
    }

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
    // mul_karatsuba: three products (a0·b0, a1·b1, (a0+a1)·(b0+b1)), five
    // additions; mul_dot: two dot products with one reduction each,
    // a0·b0 + a1·(−b1) and a0·b1 + a1·b0 (fewer multiply-adds in all on
    // 32-bit chains; fieldbench times both).
    HD static Fp2 mul_karatsuba(const Fp2 &a, const Fp2 &b) {
        Fp v0 = a.a0 * b.a0, v1 = a.a1 * b.a1;
        Fp s = (a.a0 + a.a1) * (b.a0 + b.a1);
        Fp2 r;
        r.a0 = v0 - v1;
        r.a1 = s - v0 - v1;
        return r;
    }
    HD static Fp2 mul_dot(const Fp2 &a, const Fp2 &b) {
        Fp2 r;
        r.a0 = Fp::dot32(a.a0, b.a0, a.a1, Fp::sub32(Fp::zero(), b.a1));
        r.a1 = Fp::dot32(a.a0, b.a1, a.a1, b.a0);
        return r;
    }
#if ZK_FIELD_MUL == 64
    HD friend Fp2 operator*(const Fp2 &a, const Fp2 &b) { return mul_karatsuba(a, b); }
#else
    HD friend Fp2 operator*(const Fp2 &a, const Fp2 &b) { return mul_dot(a, b); }
#endif
    // inv: (a0 − a1·u)/(a0² + a1²).
    HD Fp2 inv() const {
        Fp t = (a0.sqr() + a1.sqr()).inv();
        Fp2 r;
        r.a0 = a0 * t;
        r.a1 = (a1 * t).neg();
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
