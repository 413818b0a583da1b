// field.cuh — Montgomery fields for zkpipe's CUDA backend, one template
// over a parameter struct (limb count, modulus, −q⁻¹, R², R, headroom):
// BN254's Fr, Fp (4×64-bit limbs, the same layout and Montgomery form as
// gnark-crypto's fr.Element and fp.Element) and Fp2 (gnark's E2), and
// BLS12-381's Fr (4 limbs) and Fp (6 limbs), and its Fp2
// (notes/cuda-curve-seam.md).
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
#if ZK_FIELD_MUL != 32 && ZK_FIELD_MUL != 64
#error "ZK_FIELD_MUL: 32 (the default) or 64 (the reference)"
#endif

// ZK_MUL64_HERE: whether this compilation's operators take the 64-bit limbs:
// with ZK_FIELD_MUL=64, and in the GPU library's host code (nvcc's host
// pass: __CUDACC__ without __CUDA_ARCH__), where the device's 32-bit carry
// chains run emulated: BLS12-381's Horner over a table MSM's 16 class sums
// (driver.cuh, reduce_buckets, with the GPU waiting) took 163 µs on the
// H100 machine's host core against 25 with the 64-bit limbs
// (notes/h100-2026-12-06g.md, gpu/cuda/hornerbench.cpp; the emulated chains
// there, ZK_HOST_MUL64=0, are retired: notes/cuda-variants.md). The host
// stand-in (g++) keeps the device's products, so that CI runs the device's
// arithmetic. Both products give the same canonical values (hosttest checks
// mul32 against mul64, and passes built either way).
#if ZK_FIELD_MUL == 64 || (defined(__CUDACC__) && !defined(__CUDA_ARCH__))
#define ZK_MUL64_HERE 1
#else
#define ZK_MUL64_HERE 0
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

// Field parameters, one struct a field: LIMBS 64-bit limbs; Q, the modulus
// (little-endian limbs); INV = −q⁻¹ mod 2⁶⁴; R2 = R² mod q and ONE = R mod q
// for R = 2^(64·LIMBS) (gnark's rSquare and its one in Montgomery form).
// Field<P> reads them and derives the headroom facts (Field::HEADROOM_*)
// that its routines static_assert.
struct FpParams { // BN254 base field
    static constexpr int LIMBS = 4;
    static constexpr u64 Q[LIMBS] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL,
                                     0x30644e72e131a029ULL};
    static constexpr u64 INV = 0x87d20782e4866389ULL;
    static constexpr u64 R2[LIMBS] = {0xf32cfc5b538afa89ULL, 0xb5e71911d44501fbULL, 0x47ab1eff0a417ff6ULL,
                                      0x06d89f71cab8351fULL};
    static constexpr u64 ONE[LIMBS] = {0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL,
                                       0x0e0a77c19a07df2fULL};
};
struct FrParams { // BN254 scalar field
    static constexpr int LIMBS = 4;
    static constexpr u64 Q[LIMBS] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL,
                                     0x30644e72e131a029ULL};
    static constexpr u64 INV = 0xc2e1f593efffffffULL;
    static constexpr u64 R2[LIMBS] = {0x1bb8e645ae216da7ULL, 0x53fe3ab1e35c59e3ULL, 0x8c49833d53bb8085ULL,
                                      0x0216d0b17f4e44a5ULL};
    static constexpr u64 ONE[LIMBS] = {0xac96341c4ffffffbULL, 0x36fc76959f60cd29ULL, 0x666ea36f7879462eULL,
                                       0x0e0a77c19a07df2fULL};
};
// BLS12-381 (gnark-crypto v0.21.0 ecc/bls12-381/{fp,fr}/element.go: q, qInvNeg,
// rSquare). Fr is 255 bits: 2q fits four limbs but 4q does not, so its lazy
// [0, 2q) arithmetic is only the NTT's, every product by a canonical operand
// (LAZY_BY_OK, mul_lazy_by), and no dot32 on it (HEADROOM_4Q, DOT32_OK).
struct Bls12381FpParams {
    static constexpr int LIMBS = 6;
    static constexpr u64 Q[LIMBS] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                     0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
    static constexpr u64 INV = 0x89f3fffcfffcfffdULL;
    static constexpr u64 R2[LIMBS] = {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL,
                                      0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
    static constexpr u64 ONE[LIMBS] = {0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                                       0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
};
struct Bls12381FrParams {
    static constexpr int LIMBS = 4;
    static constexpr u64 Q[LIMBS] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                                     0x73eda753299d7d48ULL};
    static constexpr u64 INV = 0xfffffffeffffffffULL;
    static constexpr u64 R2[LIMBS] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                                      0x0748d9d99f59ff11ULL};
    static constexpr u64 ONE[LIMBS] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                                       0x1824b159acc5056fULL};
};

// bit_length: the position of x's top bit plus one (0 for 0).
HD constexpr int bit_length(u64 x) { return x ? 1 + bit_length(x >> 1) : 0; }

// q_inv32<P>: the low 32 bits of −q⁻¹ in constant memory, for Field::inv32
// (device code only).
#ifdef __CUDACC__
template <class P> static __constant__ u32 q_inv32 = (u32)P::INV;
#endif

template <class P> struct Field {
    // N 64-bit limbs, N32 = 2N 32-bit ones; every loop below runs to a
    // constant bound and is unrolled, so BN254's N = 4 compiles to the code
    // the fixed four-limb version did.
    static constexpr int N = P::LIMBS;
    static constexpr int N32 = 2 * N;
    u64 v[N];

    // The modulus's limbs as scalar constants: device code may read a
    // constexpr scalar member, not a host constexpr array (CUDA's rule for
    // constexpr variables without --expt-relaxed-constexpr), so q(i) selects
    // among QLimb<I>::value; with i a constant after unrolling it folds to
    // an immediate, as the fixed Q0..Q3 did.
    template <int I> struct QLimb {
        static constexpr u64 value = P::Q[I];
    };
    template <int I> HD static u64 qsel(int i) {
        if constexpr (I == N - 1)
            return QLimb<I>::value;
        else
            return i == I ? QLimb<I>::value : qsel<I + 1>(i);
    }
    HD static u64 q(int i) { return qsel<0>(i); }
    // the parameter arrays themselves, for host code (hosttest) only
    static const u64 *qs() { return P::Q; }
    static const u64 *r2s() { return P::R2; }

    static constexpr u64 INV = P::INV; // −q⁻¹ mod 2⁶⁴

    // ---- headroom: what the routines below assume about q's size ----
    static constexpr u64 TOP = P::Q[N - 1];        // q's top 64-bit limb
    static constexpr u64 TOP32 = TOP >> 32;         // and 32-bit limb
    static constexpr int BITS = 64 * (N - 1) + bit_length(TOP);
    // 2q < R: a sum of two canonical elements fits N limbs (add, sub, the
    // conditional subtractions drop no carry).
    static constexpr bool HEADROOM_2Q = (TOP >> 63) == 0;
    // 4q < R: lazy elements in [0, 2q) (mul_lazy, add_lazy2q, sub_lazy2q),
    // and mul32 of lazy inputs (mul_lazy's comment: the bounds).
    static constexpr bool HEADROOM_4Q = (TOP >> 62) == 0;
    // mul64: CIOS without the extra carry words (gnark's "no-carry" variant)
    // needs q's top limb ≤ (2⁶⁴ − 1)/2 − 1.
    static constexpr bool NO_CARRY_CIOS = TOP <= 0x7ffffffffffffffeULL;
    // mont32 (the even/odd 32-bit CIOS) on canonical inputs: a_top + q_top
    // + 5 ≤ 2^32 (mul_lazy's comment, (2)); lazy inputs need HEADROOM_4Q.
    static constexpr bool MONT32_OK = 2 * TOP32 + 5 <= 0x100000000ULL;
    // Lazy elements in [0, 2q) whose every product has one canonical
    // operand (the NTT's: a twiddle or a scale factor), which mont32 takes
    // as its multiplicand: 2q < R is room enough (mul_lazy_by). BLS12-381's
    // Fr has this and not HEADROOM_4Q.
    static constexpr bool LAZY_BY_OK = HEADROOM_2Q && MONT32_OK;
    // dot32: both products in the same rows: a_top + c_top + q_top + 8 ≤
    // 2^32 for canonical inputs (BN254: 0x912ceb5e; BLS12-381 Fp too; not
    // BLS12-381's Fr, whose top limb is 0x73eda753).
    static constexpr bool DOT32_OK = 3 * TOP32 + 8 <= 0x100000000ULL && HEADROOM_4Q;
    // The lazy curve formulas (curve.cuh, XYZZ::add_affine_lazy and
    // add_lazy): dot32 of lazy operands (a, c < 2q: its odd chain's top then
    // takes 2·(2·q_top + 1) + q_top + 8 ≤ 2^32) whose sum a·b + c·d < 8q²
    // still comes out below 2q before its subtraction (needs 8q < R):
    // BLS12-381's Fp (q < 2^381, R = 2^384; 5·0x1a0111ea + 10 < 2^32), not
    // BN254's (q ≈ 2^254: 8q > 2^256).
    static constexpr bool HEADROOM_8Q = (TOP >> 61) == 0;
    static constexpr bool LAZY_DOT_OK = HEADROOM_8Q && 5 * TOP32 + 10 <= 0x100000000ULL;
    static_assert(HEADROOM_2Q && NO_CARRY_CIOS && MONT32_OK, "field.cuh needs 2q < R and q's top limb below 2^63 - 1");
    static_assert(P::Q[0] > 2, "inv's exponent q - 2 takes 2 from the low limb alone");

    HD static Field zero() {
        Field r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    HD bool is_zero() const {
        u64 o = v[0];
#pragma unroll
        for (int i = 1; i < N; i++) o |= v[i];
        return o == 0;
    }
    HD bool eq(const Field &o) const {
        u64 d = v[0] ^ o.v[0];
#pragma unroll
        for (int i = 1; i < N; i++) d |= v[i] ^ o.v[i];
        return d == 0;
    }
    // one: R mod q, 1 in Montgomery form.
    HD static Field one() {
        Field r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = oneLimb<0>(i);
        return r;
    }
    template <int I> struct OneLimb {
        static constexpr u64 value = P::ONE[I];
    };
    template <int I> HD static u64 oneLimb(int i) {
        if constexpr (I == N - 1)
            return OneLimb<I>::value;
        else
            return i == I ? OneLimb<I>::value : oneLimb<I + 1>(i);
    }

    // ---- N 64-bit limbs: the first version, kept as the reference ----

    // reduce_once: x ← x − q if x ≥ q (x < 2q).
    HD void reduce_once() {
        u64 d[N], borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
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
            for (int i = 0; i < N; i++) v[i] = d[i];
        }
    }

    HD static Field add64(const Field &a, const Field &b) {
        Field r;
        u64 carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            u64 s = a.v[i] + b.v[i];
            u64 c1 = s < a.v[i];
            u64 s2 = s + carry;
            u64 c2 = s2 < s;
            r.v[i] = s2;
            carry = c1 | c2;
        }
        // a + b < 2q < R (HEADROOM_2Q): no carry out of the top limb.
        r.reduce_once();
        return r;
    }

    HD static Field sub64(const Field &a, const Field &b) {
        Field r;
        u64 borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
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
            for (int i = 0; i < N; i++) {
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

    // Montgomery product a·b·R⁻¹ mod q: CIOS without the extra carry
    // words, valid because q's top limb is below 2⁶³ − 1 (NO_CARRY_CIOS:
    // gnark's "no-carry" variant), then one conditional subtraction.
    HD static Field mul64(const Field &a, const Field &b) {
        u64 t[N] = {};
#pragma unroll
        for (int i = 0; i < N; i++) {
            u64 A = 0;
            mac(t[0], a.v[0], b.v[i], A);
            u64 m = t[0] * P::INV;
            u64 C = 0, d = t[0];
            mac(d, m, q(0), C);
#pragma unroll
            for (int j = 1; j < N; j++) {
                mac(t[j], a.v[j], b.v[i], A);
                u64 x = t[j];
                mac(x, m, q(j), C);
                t[j - 1] = x;
            }
            t[N - 1] = C + A;
        }
        Field r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = t[i];
        r.reduce_once();
        return r;
    }

    // ---- eight 32-bit limbs in PTX carry chains (ptx.cuh) ----
    //
    // The same bits as v (little-endian limbs), split into registers. The
    // product is the even/odd CIOS of sppark's mont_t: the products a_j·b_i
    // of even j and of odd j accumulate in two arrays, so every carry chain
    // is one unbroken run of mad.lo.cc/madc.hi.cc, and the two merge once at
    // the end. The chains that drop their last carry cannot carry there
    // while q's top 32-bit limb leaves room (MONT32_OK for canonical inputs,
    // HEADROOM_4Q for lazy ones; BN254's q < 2^254 has both). Loops run to
    // N32, a constant: unrolled, N32 = 8 is the BN254 code as it was.

    HD static u32 q32(int i) { return (i & 1) ? (u32)(q(i >> 1) >> 32) : (u32)q(i >> 1); }
    // inv32: −q⁻¹ mod 2^32, the Montgomery step's mi = acc₀·inv32. Where it
    // is 2^32 − 1 or 1 (q ≡ 1 or −1 mod 2^32: BLS12-381's Fr, q mod 2^64 =
    // 0xffffffff00000001), ptxas folds mi into a negation or a copy, and
    // then leaves the steps' limb products unfused: an IMAD and an IMAD.HI
    // a limb product instead of one IMAD.WIDE.U32.X. BLS12-381's Fr NTT
    // kernel took 7,504 instructions to BN254's 6,408 so (nvcc 11.8; a
    // product 256 to 208). On the device such a value is read from
    // constant memory (q_inv32), which ptxas does not fold.
    static constexpr bool FOLDABLE_INV = (u32)P::INV == 0xffffffffu || (u32)P::INV == 1;
    HD static u32 inv32() {
#ifdef __CUDA_ARCH__
        if constexpr (FOLDABLE_INV) return q_inv32<P>;
#endif
        return (u32)P::INV;
    }

    HD void split(u32 x[N32]) const {
#pragma unroll
        for (int i = 0; i < N; i++) {
            x[2 * i] = (u32)v[i];
            x[2 * i + 1] = (u32)(v[i] >> 32);
        }
    }
    HD static Field join(const u32 x[N32]) {
        Field r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = ((u64)x[2 * i + 1] << 32) | x[2 * i];
        return r;
    }

    // sub_q_if_ge: x ← x − q if x ≥ q (x < 2q).
    HD static void sub_q_if_ge(u32 x[N32]) {
        u32 cc = 0, t[N32];
        t[0] = sub_cc(x[0], q32(0), cc);
#pragma unroll
        for (int i = 1; i < N32; i++) t[i] = subc_cc(x[i], q32(i), cc);
        u32 borrow = subc(0, 0, cc); // 0 or 0xffffffff
#pragma unroll
        for (int i = 0; i < N32; i++) x[i] = borrow ? x[i] : t[i];
    }

    HD static Field add32(const Field &a, const Field &b) {
        u32 x[N32], y[N32], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = add_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < N32 - 1; i++) x[i] = addc_cc(x[i], y[i], cc);
        x[N32 - 1] = addc(x[N32 - 1], y[N32 - 1], cc); // a + b < 2q < R: no carry out
        sub_q_if_ge(x);
        return join(x);
    }

    HD static Field sub32(const Field &a, const Field &b) {
        u32 x[N32], y[N32], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = sub_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < N32; i++) x[i] = subc_cc(x[i], y[i], cc);
        u32 mask = subc(0, 0, cc); // all ones if a < b: add q back
        x[0] = add_cc(x[0], q32(0) & mask, cc);
#pragma unroll
        for (int i = 1; i < N32 - 1; i++) x[i] = addc_cc(x[i], q32(i) & mask, cc);
        x[N32 - 1] = addc(x[N32 - 1], q32(N32 - 1) & mask, cc);
        return join(x);
    }

    // redc_row: one row of the even/odd CIOS: acc += a·bi, then one
    // Montgomery step (mi = acc₀·(−q⁻¹) mod 2³², acc += q·mi), shifting one
    // limb. even/odd swap roles from row to row.
    HD static void redc_row(u32 even[N32], u32 odd[N32], const u32 a[N32], u32 bi, bool first) {
        u32 cc = 0;
        if (first) {
#pragma unroll
            for (int j = 0; j < N32; j += 2) {
                odd[j] = mul_lo(a[j + 1], bi);
                odd[j + 1] = mul_hi(a[j + 1], bi);
            }
#pragma unroll
            for (int j = 0; j < N32; j += 2) {
                even[j] = mul_lo(a[j], bi);
                even[j + 1] = mul_hi(a[j], bi);
            }
        } else {
            even[0] = add_cc(even[0], odd[1], cc);
            // odd ← odd>>2 limbs + odd-limb products, in the same chain
#pragma unroll
            for (int j = 0; j < N32 - 2; j += 2) {
                odd[j] = madc_lo_cc(a[j + 1], bi, odd[j + 2], cc);
                odd[j + 1] = madc_hi_cc(a[j + 1], bi, odd[j + 3], cc);
            }
            odd[N32 - 2] = madc_lo_cc(a[N32 - 1], bi, 0, cc);
            odd[N32 - 1] = madc_hi(a[N32 - 1], bi, 0, cc);
            even[0] = mad_lo_cc(a[0], bi, even[0], cc);
            even[1] = madc_hi_cc(a[0], bi, even[1], cc);
#pragma unroll
            for (int j = 2; j < N32; j += 2) {
                even[j] = madc_lo_cc(a[j], bi, even[j], cc);
                even[j + 1] = madc_hi_cc(a[j], bi, even[j + 1], cc);
            }
            odd[N32 - 1] = addc(odd[N32 - 1], 0, cc);
        }
        reduce_step(even, odd);
    }

    // reduce_step: the Montgomery step that ends a row: mi = acc₀·(−q⁻¹)
    // mod 2³², acc += q·mi (odd limbs of q into odd, even into even).
    HD static void reduce_step(u32 even[N32], u32 odd[N32]) {
        u32 cc = 0;
        u32 mi = even[0] * inv32();
        odd[0] = mad_lo_cc(q32(1), mi, odd[0], cc);
        odd[1] = madc_hi_cc(q32(1), mi, odd[1], cc);
#pragma unroll
        for (int j = 2; j < N32; j += 2) {
            odd[j] = madc_lo_cc(q32(j + 1), mi, odd[j], cc);
            odd[j + 1] = madc_hi_cc(q32(j + 1), mi, odd[j + 1], cc);
        }
        even[0] = mad_lo_cc(q32(0), mi, even[0], cc);
        even[1] = madc_hi_cc(q32(0), mi, even[1], cc);
#pragma unroll
        for (int j = 2; j < N32; j += 2) {
            even[j] = madc_lo_cc(q32(j), mi, even[j], cc);
            even[j + 1] = madc_hi_cc(q32(j), mi, even[j + 1], cc);
        }
        odd[N32 - 1] = addc(odd[N32 - 1], 0, cc);
    }

    // mont32: the even/odd CIOS rows and their merge, without the final
    // subtraction: r = (x·y + M·q)/2^256, M the unique M < 2^256 with
    // x·y + M·q ≡ 0 mod 2^256 (mul_lazy's comment: the bounds).
    HD static void mont32(const u32 x[N32], const u32 y[N32], u32 even[N32]) {
        u32 odd[N32], cc = 0;
#pragma unroll
        for (int i = 0; i < N32; i += 2) {
            redc_row(even, odd, x, y[i], i == 0);
            redc_row(odd, even, x, y[i + 1], false);
        }
        even[0] = add_cc(even[0], odd[1], cc);
#pragma unroll
        for (int j = 1; j < N32 - 1; j++) even[j] = addc_cc(even[j], odd[j + 1], cc);
        even[N32 - 1] = addc(even[N32 - 1], 0, cc);
    }

    // mul32: the canonical product; its inputs may be canonical or, where
    // HEADROOM_4Q, lazy (in [0, 2q)): mont32 returns < 2q for both
    // (mul_lazy), so one conditional subtraction of q gives [0, q).
    HD static Field mul32(const Field &a, const Field &b) {
        u32 x[N32], y[N32], r[N32];
        a.split(x);
        b.split(y);
        mont32(x, y, r);
        sub_q_if_ge(r);
        return join(r);
    }

    // ---- lazy reduction: elements in [0, 2q) (the regs NTT; eager left in ABI 9: notes/cuda-variants.md) ----
    //
    // (Written for BN254's N32 = 8: for other limb counts n read R for 2^256,
    // R·2^32 for 2^288, R/2^32 for 2^224, limb n − 1 for limb 7 and the top
    // 32-bit limbs of a and q for a_7, q_7. Only fields with HEADROOM_4Q
    // have these routines: not BLS12-381's Fr. BLS12-381's Fp, n = 12:
    // q < 2^381 so 4q < 2^384 = R, q_11 = 0x1a0111ea, a < 2q gives a_11 ≤
    // 0x340223d5, and a_11 + q_11 + 5 = 0x4e0335c4 < 2^32: (1) and (2) hold
    // as they are written, with room to spare.)
    //
    // Both BN254 fields have q < 2^254, so 4q < 2^256 = R: a sum of two elements
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

    // ---- lazy elements where only 2q < R (LAZY_BY_OK: BLS12-381's Fr) ----
    //
    // mul_lazy_by(a, c), a < 2q, c < q canonical: a·c·R⁻¹ in [0, 2q), no
    // final subtraction. Without HEADROOM_4Q, c goes in as mont32's
    // multiplicand x and a as y: (2) above bounds the odd chain by the
    // multiplicand's top limb, c_top + q_top + 5 ≤ 2·q_top + 5 ≤ 2^32
    // (MONT32_OK; BLS12-381's Fr: 0xe7db4eab), and y enters only limb by
    // limb, so no carry is lost whatever a's size; and (1) becomes T <
    // (a·c + M·q)/R < (2q² + R·q)/R = q·(1 + 2q/R) < 2q, as 2q < R. With
    // HEADROOM_4Q it is mul_lazy(a, c), the order the BN254 NTT was measured
    // in. hosttest's test_lazy_by checks it against redc_ref.
    HD static Field mul_lazy_by(const Field &a, const Field &c) {
        static_assert(LAZY_BY_OK, "mul_lazy_by needs 2q < R and a canonical multiplicand's room");
        if constexpr (HEADROOM_4Q) return mul_lazy(a, c);
        else return mont32_of(c, a);
    }
    // mul32_by(a, c), a < 2q, c < q: the canonical product (mont32 as in
    // mul_lazy_by, < 2q, then one subtraction of q).
    HD static Field mul32_by(const Field &a, const Field &c) {
        static_assert(LAZY_BY_OK, "mul32_by needs 2q < R and a canonical multiplicand's room");
        if constexpr (HEADROOM_4Q) return mul32(a, c);
        else return mul32(c, a);
    }

    // q2: the limbs of 2q (< R: HEADROOM_2Q).
    HD static u64 q2(int i) { return (q(i) << 1) | (i ? q(i - 1) >> 63 : 0); }
    HD static u32 q2_32(int i) { return (i & 1) ? (u32)(q2(i >> 1) >> 32) : (u32)q2(i >> 1); }

    HD static Field mul_lazy(const Field &a, const Field &b) {
        static_assert(HEADROOM_4Q, "lazy reduction needs 4q < R");
        return mont32_of(a, b);
    }
    // mont32_of: mont32 of x (the multiplicand) and y, no final subtraction.
    HD static Field mont32_of(const Field &x, const Field &y) {
        u32 a[N32], b[N32], r[N32];
        x.split(a);
        y.split(b);
        mont32(a, b, r);
        return join(r);
    }

    // add_lazy2q: a + b, less 2q if that is ≥ 2q (a, b < 2q; the result <
    // 2q). With HEADROOM_4Q a + b < 4q < R: no carry out. With 2q < R
    // alone (BLS12-381's Fr) a + b < 4q < 2R may carry out; then it is ≥ R >
    // 2q, and the subtraction of 2q, whose borrow that carry cancels, gives
    // a + b − 2q < 2q exactly in N32 limbs.
    HD static Field add_lazy2q(const Field &a, const Field &b) {
        static_assert(LAZY_BY_OK, "lazy reduction needs 2q < R");
        u32 x[N32], y[N32], t[N32], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = add_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < N32 - 1; i++) x[i] = addc_cc(x[i], y[i], cc);
        u32 carry = 0;
        if constexpr (HEADROOM_4Q) {
            x[N32 - 1] = addc(x[N32 - 1], y[N32 - 1], cc); // a + b < 4q < R: no carry out
        } else {
            x[N32 - 1] = addc_cc(x[N32 - 1], y[N32 - 1], cc);
            carry = addc(0, 0, cc);
        }
        t[0] = sub_cc(x[0], q2_32(0), cc);
#pragma unroll
        for (int i = 1; i < N32; i++) t[i] = subc_cc(x[i], q2_32(i), cc);
        // non-zero if a + b < 2q (no carry, and the subtraction borrowed):
        // keep it; else take a + b − 2q (carry − borrow is then 0, or 1,
        // which cannot happen)
        u32 keep = HEADROOM_4Q ? subc(0, 0, cc) : subc(carry, 0, cc) >> 31;
#pragma unroll
        for (int i = 0; i < N32; i++) x[i] = keep ? x[i] : t[i];
        return join(x);
    }

    // sub_lazy2q: a − b, plus 2q if that borrowed (a, b < 2q: a − b is in
    // (−2q, 2q); the result in [0, 2q)). The add chain's carry out is the
    // borrow's 2^256 and is dropped.
    HD static Field sub_lazy2q(const Field &a, const Field &b) {
        static_assert(HEADROOM_2Q, "lazy reduction needs 2q < R");
        u32 x[N32], y[N32], cc = 0;
        a.split(x);
        b.split(y);
        x[0] = sub_cc(x[0], y[0], cc);
#pragma unroll
        for (int i = 1; i < N32; i++) x[i] = subc_cc(x[i], y[i], cc);
        u32 mask = subc(0, 0, cc); // all ones if a < b: add 2q back
        x[0] = add_cc(x[0], q2_32(0) & mask, cc);
#pragma unroll
        for (int i = 1; i < N32 - 1; i++) x[i] = addc_cc(x[i], q2_32(i) & mask, cc);
        x[N32 - 1] = addc(x[N32 - 1], q2_32(N32 - 1) & mask, cc);
        return join(x);
    }

    // is_zero_2q: a lazy value (< 2q) is 0 mod q: it is 0 or q.
    HD bool is_zero_2q() const {
        u64 z = v[0], d = v[0] ^ q(0);
#pragma unroll
        for (int i = 1; i < N; i++) z |= v[i], d |= v[i] ^ q(i);
        return z == 0 || d == 0;
    }
    // neg_lazy2q: 2q − a for lazy a in (0, 2q), 0 for 0: in [0, 2q), ≡ −a.
    HD static Field neg_lazy2q(const Field &a) { return sub_lazy2q(zero(), a); }

    // reduce_2q: the canonical value of a lazy one (x < 2q → x mod q).
    HD static Field reduce_2q(const Field &a) {
        static_assert(HEADROOM_2Q, "lazy reduction needs 2q < R");
        u32 x[N32];
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
    HD static void reduce_row(u32 even[N32], u32 odd[N32], bool first) {
        u32 cc = 0, mi;
        if (first) {
            mi = even[0] * inv32();
#pragma unroll
            for (int j = 0; j < N32; j += 2) {
                odd[j] = mul_lo(q32(j + 1), mi);
                odd[j + 1] = mul_hi(q32(j + 1), mi);
            }
        } else {
            even[0] = add_cc(even[0], odd[1], cc);
            mi = even[0] * inv32();
#pragma unroll
            for (int j = 0; j < N32 - 2; j += 2) {
                odd[j] = madc_lo_cc(q32(j + 1), mi, odd[j + 2], cc);
                odd[j + 1] = madc_hi_cc(q32(j + 1), mi, odd[j + 3], cc);
            }
            odd[N32 - 2] = madc_lo_cc(q32(N32 - 1), mi, 0, cc);
            odd[N32 - 1] = madc_hi(q32(N32 - 1), mi, 0, cc);
        }
        even[0] = mad_lo_cc(q32(0), mi, even[0], cc);
        even[1] = madc_hi_cc(q32(0), mi, even[1], cc);
#pragma unroll
        for (int j = 2; j < N32; j += 2) {
            even[j] = madc_lo_cc(q32(j), mi, even[j], cc);
            even[j + 1] = madc_hi_cc(q32(j), mi, even[j + 1], cc);
        }
        odd[N32 - 1] = addc(odd[N32 - 1], 0, cc);
    }

    // sqr32: sqr32_8's rows, written out for N32 = 8 (BN254's fields and
    // BLS12-381's Fr), and sqr32_n's for any other even N32 (BLS12-381's Fp,
    // 12); hosttest's test_sqr holds both to mul32(x, x), the square before
    // sqr32_n (ZK_SQR_VIA_MUL, retired: notes/cuda-variants.md).
    HD static Field sqr32(const Field &x) {
        if constexpr (N32 == 8)
            return sqr32_8(x);
        else
            return join(sqr32_n_raw(x));
    }
    // sqr_lazy: x² R⁻¹ in [0, 2q) for x in [0, 2q), no final subtraction
    // (sqr32_n_raw's comment: the bounds; mul_lazy's for mul32(x, x)).
    HD static Field sqr_lazy(const Field &x) {
        static_assert(HEADROOM_4Q, "lazy reduction needs 4q < R");
        if constexpr (N32 == 8)
            return mul_lazy(x, x); // sqr32_8 ends in its subtraction; BN254 keeps mont32 here
        else
            return join(sqr32_n_raw(x, false));
    }
    struct Limbs32 {
        u32 l[N32];
    };
    HD static Field join(const Limbs32 &x) { return join(x.l); }

    // sqr32_n: the square of x for any even N32 = n, as sqr32_8 computes it:
    // the cross products a_i·a_j (i < j) once, n(n−1)/2 of them, doubled,
    // plus the diagonal a_i², then one Montgomery reduction of the 2n-limb
    // square (n reduce_rows over its low half, plus its high half): for
    // n = 12, 66 + 12 limb products and 144 reduction ones where mont32
    // takes 144 + 144.
    //
    // The cross products go into two 2n-limb arrays by the parity of a
    // pair's position i + j: E (pairs (lo, hi) at even positions, j − i
    // even) and O (odd positions, j − i odd), so every row's pairs for one
    // array are adjacent and its chain is unbroken. Both start at zero (the
    // mad's addend then is a zero register: the same instruction). Each
    // chain's carry goes into the limb above its top pair; with n even that
    // limb is either fresh (0) or holds only an earlier row's carry (≤ 1):
    // row i's top pairs are (i+n−2, i+n−1) and (i+n−1, i+n), and the array
    // whose top pair is the lower one this row had its top pair one higher
    // in row i−1, which put its carry (≤ 1) exactly where this row's carry
    // goes: ≤ 2, no carry out of it. So E and O are exact, and so are
    // their sum and its double, all < a² < 2^(64n) (a < 2q < R), no carry
    // dropped at the top.
    //
    // The reduction: n reduce_rows over the low half L (a mul_by_1: only
    // q·m_i rows; its odd chain's top takes q's top limb, q_top + 4 < 2^32)
    // give (L + M·q)/R ≤ q, then the high half H < a²/R: T = (a² + M·q)/R <
    // a²/R + q. For a < q, T < q·(q/R) + q < 2q; for lazy a < 2q (where
    // HEADROOM_4Q), T < 4q²/R + q < 2q since 4q < R. T < 2q < R, so the
    // last addition drops no carry; `canonical` subtracts q once if T ≥ q.
    HD static Limbs32 sqr32_n_raw(const Field &x, bool canonical = true) {
        static_assert(N32 % 2 == 0 && N32 >= 4, "sqr32_n's rows are for an even limb count");
        constexpr int n = N32;
        u32 a[n], E[2 * n], O[2 * n], cc = 0;
        x.split(a);
#pragma unroll
        for (int k = 0; k < 2 * n; k++) E[k] = 0, O[k] = 0;
        // cross products, row i: a_i·a_j at position i + j
#pragma unroll
        for (int i = 0; i < n - 1; i++) {
            // j − i odd → O; j − i even → E (j ≥ i + 2)
#pragma unroll
            for (int par = 1; par <= 2; par++) {
                u32 *X = par == 1 ? O : E;
                const int j0 = i + par;
                if (j0 > n - 1) continue;
                int top = j0;
                X[i + j0] = mad_lo_cc(a[i], a[j0], X[i + j0], cc);
                X[i + j0 + 1] = madc_hi_cc(a[i], a[j0], X[i + j0 + 1], cc);
#pragma unroll
                for (int j = j0 + 2; j < n; j += 2) {
                    X[i + j] = madc_lo_cc(a[i], a[j], X[i + j], cc);
                    X[i + j + 1] = madc_hi_cc(a[i], a[j], X[i + j + 1], cc);
                    top = j;
                }
                X[i + top + 2] = addc(X[i + top + 2], 0, cc); // i + top + 2 ≤ 2n − 1
            }
        }
        // W = 2·(E + O), in E
        E[0] = add_cc(E[0], O[0], cc);
#pragma unroll
        for (int k = 1; k < 2 * n - 1; k++) E[k] = addc_cc(E[k], O[k], cc);
        E[2 * n - 1] = addc(E[2 * n - 1], O[2 * n - 1], cc);
        E[0] = add_cc(E[0], E[0], cc);
#pragma unroll
        for (int k = 1; k < 2 * n - 1; k++) E[k] = addc_cc(E[k], E[k], cc);
        E[2 * n - 1] = addc(E[2 * n - 1], E[2 * n - 1], cc);
        // plus the diagonal
        E[0] = mad_lo_cc(a[0], a[0], E[0], cc);
        E[1] = madc_hi_cc(a[0], a[0], E[1], cc);
#pragma unroll
        for (int i = 1; i < n - 1; i++) {
            E[2 * i] = madc_lo_cc(a[i], a[i], E[2 * i], cc);
            E[2 * i + 1] = madc_hi_cc(a[i], a[i], E[2 * i + 1], cc);
        }
        E[2 * n - 2] = madc_lo_cc(a[n - 1], a[n - 1], E[2 * n - 2], cc);
        E[2 * n - 1] = madc_hi(a[n - 1], a[n - 1], E[2 * n - 1], cc);
        return redc_wide(E, canonical);
    }
    // redc_wide: W·R⁻¹ mod q from a 2n-limb W < q·R (sqr32_n_raw's
    // reduction): n reduce_rows over the low half L (a mul_by_1:
    // only q·m_i rows) give (L + M·q)/R ≤ q, then the high half H is added:
    // T = (W + M·q)/R < W/R + q < 2q < R, so the last addition drops no
    // carry; `canonical` subtracts q once if T ≥ q. W is overwritten.
    HD static Limbs32 redc_wide(u32 W[2 * N32], bool canonical = true) {
        constexpr int n = N32;
        u32 *even = W, red[n], cc = 0;
#pragma unroll
        for (int i = 0; i < n; i += 2) {
            reduce_row(even, red, i == 0);
            reduce_row(red, even, false);
        }
        even[0] = add_cc(even[0], red[1], cc);
#pragma unroll
        for (int j = 1; j < n - 1; j++) even[j] = addc_cc(even[j], red[j + 1], cc);
        even[n - 1] = addc(even[n - 1], 0, cc);
        Limbs32 r;
        r.l[0] = add_cc(even[0], W[n], cc);
#pragma unroll
        for (int j = 1; j < n - 1; j++) r.l[j] = addc_cc(even[j], W[n + j], cc);
        r.l[n - 1] = addc(even[n - 1], W[2 * n - 1], cc);
        if (canonical) sub_q_if_ge(r.l);
        return r;
    }

    // sqr32_8 serves BLS12-381's Fr too (q ≈ 2^254.9, no HEADROOM_4Q):
    // canonical x < q gives x² < 2^510 (the 16 limbs, no carry out of the
    // doubling), reduce_row's odd top takes q_7 + 4 = 0x73eda757 < 2^32, and
    // T = (x² + M·q)/R < q·(q/R) + q < 2q (q/R < 1/2) < R: one subtraction.
    // (hosttest's test_sqr checks it on q − 1, q − 2^k, 2^k and random x.)
    HD static Field sqr32_8(const Field &x) {
        static_assert(N32 == 8, "sqr32_8's rows are for eight 32-bit limbs");
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
    // before each row's reduction step. Needs DOT32_OK: the odd chain's top
    // takes a's, c's and q's top limbs; the sum before the final subtraction
    // stays below 2q (a·b + c·d < 2q² and q < R/4).
    HD static void dot_row(u32 even[N32], u32 odd[N32], const u32 a[N32], u32 bi, const u32 c[N32], u32 di,
                           bool first) {
        u32 cc = 0;
        if (first) {
            mul_pairs(odd, a + 1, bi, N32);
            cmad(odd, c + 1, di, N32, cc);
            mul_pairs(even, a, bi, N32);
            cmad(even, c, di, N32, cc);
            odd[N32 - 1] = addc(odd[N32 - 1], 0, cc);
        } else {
            even[0] = add_cc(even[0], odd[1], cc);
#pragma unroll
            for (int j = 0; j < N32 - 2; j += 2) {
                odd[j] = madc_lo_cc(a[j + 1], bi, odd[j + 2], cc);
                odd[j + 1] = madc_hi_cc(a[j + 1], bi, odd[j + 3], cc);
            }
            odd[N32 - 2] = madc_lo_cc(a[N32 - 1], bi, 0, cc);
            odd[N32 - 1] = madc_hi(a[N32 - 1], bi, 0, cc);
            cmad(odd, c + 1, di, N32, cc);
            cmad(even, a, bi, N32, cc);
            odd[N32 - 1] = addc(odd[N32 - 1], 0, cc);
            cmad(even, c, di, N32, cc);
            odd[N32 - 1] = addc(odd[N32 - 1], 0, cc);
        }
        reduce_step(even, odd);
    }

    HD static Field dot32(const Field &a, const Field &b, const Field &c, const Field &d) {
        static_assert(DOT32_OK, "dot32 needs 3·q_top32 + 8 <= 2^32 (and 4q < R)");
        u32 x[N32], y[N32], z[N32], w[N32], even[N32], odd[N32], cc = 0;
        a.split(x);
        b.split(y);
        c.split(z);
        d.split(w);
#pragma unroll
        for (int i = 0; i < N32; i += 2) {
            dot_row(even, odd, x, y[i], z, w[i], i == 0);
            dot_row(odd, even, x, y[i + 1], z, w[i + 1], false);
        }
        even[0] = add_cc(even[0], odd[1], cc);
#pragma unroll
        for (int j = 1; j < N32 - 1; j++) even[j] = addc_cc(even[j], odd[j + 1], cc);
        even[N32 - 1] = addc(even[N32 - 1], 0, cc);
        sub_q_if_ge(even);
        return join(even);
    }

    // ---- the operators, by ZK_MUL64_HERE ----
#if ZK_MUL64_HERE
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

#if ZK_MUL64_HERE
    HD Field sqr() const { return mul64(*this, *this); }
#else
    HD Field sqr() const { return sqr32(*this); }
#endif

    // inv: x^(q−2) = x⁻¹ (Fermat; 0 for 0), square-and-multiply from the
    // top bit of q − 2 (bit BITS − 1, q's own: q − 2 > 2^(BITS−1)) down.
    // Precomputation only: BN254: ≈ 250 squares and 130 products.
    HD Field inv() const {
        u64 e[N];
#pragma unroll
        for (int i = 0; i < N; i++) e[i] = q(i);
        e[0] -= 2;       // q's low limb is > 2 (static_assert above)
        Field r = *this; // the top bit
        for (int i = BITS - 2; i >= 0; i--) {
            r = r.sqr();
            if ((e[i >> 6] >> (i & 63)) & 1) r = r * *this;
        }
        return r;
    }

    // from_mont: the canonical integer of a Montgomery-form element.
    HD Field from_mont() const {
        Field one = zero();
        one.v[0] = 1;
        return *this * one;
    }
};

typedef Field<FpParams> Fp;
typedef Field<FrParams> Fr;
typedef Field<Bls12381FpParams> Bls12381Fp;
typedef Field<Bls12381FrParams> Bls12381Fr;

// Fp2T<F> = F[u]/(u² + 1), gnark's E2 {A0, A1}: over BN254's Fp (Fp2) and
// BLS12-381's (both have −1 a non-square: q ≡ 3 mod 4).
// The product is mul_dot's two dot products where F has dot32 (the 32-bit
// build), Karatsuba's three products otherwise. Over BLS12-381's Fp,
// Karatsuba lost to mul_dot (G2 MSM 2^20 31.4 ms against 27.4, H100,
// notes/h100-2026-12-06b.md), and so did Karatsuba with the reductions
// deferred (28.1 → 33.9 ms on the H200, 10 KB of spills in k_segment,
// notes/h200-2026-12-03d.md): ZK_BLS_FP2_KARATSUBA and ZK_BLS_FP2_WIDE are
// retired (notes/cuda-variants.md).

template <class F> struct Fp2T {
    F a0, a1;
    HD static Fp2T zero() {
        Fp2T r;
        r.a0 = F::zero();
        r.a1 = F::zero();
        return r;
    }
    HD static Fp2T one() {
        Fp2T r;
        r.a0 = F::one();
        r.a1 = F::zero();
        return r;
    }
    HD bool is_zero() const { return a0.is_zero() && a1.is_zero(); }
    HD bool eq(const Fp2T &o) const { return a0.eq(o.a0) && a1.eq(o.a1); }
    HD friend Fp2T operator+(const Fp2T &a, const Fp2T &b) {
        Fp2T r;
        r.a0 = a.a0 + b.a0;
        r.a1 = a.a1 + b.a1;
        return r;
    }
    HD friend Fp2T operator-(const Fp2T &a, const Fp2T &b) {
        Fp2T r;
        r.a0 = a.a0 - b.a0;
        r.a1 = a.a1 - b.a1;
        return r;
    }
    HD Fp2T neg() const {
        Fp2T r;
        r.a0 = a0.neg();
        r.a1 = a1.neg();
        return r;
    }
    HD Fp2T dbl() const { return *this + *this; }
    // mul_karatsuba: three products (a0·b0, a1·b1, (a0+a1)·(b0+b1)), five
    // additions; mul_dot: two dot products with one reduction each,
    // a0·b0 + a1·(−b1) and a0·b1 + a1·b0 (fewer multiply-adds in all on
    // 32-bit chains; fieldbench times both).
    HD static Fp2T mul_karatsuba(const Fp2T &a, const Fp2T &b) {
        F v0 = a.a0 * b.a0, v1 = a.a1 * b.a1;
        F s = (a.a0 + a.a1) * (b.a0 + b.a1);
        Fp2T r;
        r.a0 = v0 - v1;
        r.a1 = s - v0 - v1;
        return r;
    }
    HD static Fp2T mul_dot(const Fp2T &a, const Fp2T &b) {
        Fp2T r;
        r.a0 = F::dot32(a.a0, b.a0, a.a1, F::sub32(F::zero(), b.a1));
        r.a1 = F::dot32(a.a0, b.a1, a.a1, b.a0);
        return r;
    }
#if ZK_MUL64_HERE
    HD friend Fp2T operator*(const Fp2T &a, const Fp2T &b) { return mul_karatsuba(a, b); }
#else
    HD friend Fp2T operator*(const Fp2T &a, const Fp2T &b) {
        if constexpr (F::DOT32_OK)
            return mul_dot(a, b);
        else
            return mul_karatsuba(a, b);
    }
#endif
    // inv: (a0 − a1·u)/(a0² + a1²).
    HD Fp2T inv() const {
        F t = (a0.sqr() + a1.sqr()).inv();
        Fp2T r;
        r.a0 = a0 * t;
        r.a1 = (a1 * t).neg();
        return r;
    }
    HD Fp2T sqr() const {
        Fp2T r;
        F t = a0 * a1;
        r.a0 = (a0 + a1) * (a0 - a1);
        r.a1 = t + t;
        return r;
    }
};

typedef Fp2T<Fp> Fp2;
typedef Fp2T<Bls12381Fp> Bls12381Fp2;
