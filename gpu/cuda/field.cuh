// field.cuh — BN254's Montgomery fields for zkpipe's CUDA backend: Fr, Fp
// (4×64-bit limbs, the same layout and Montgomery form as gnark-crypto's
// fr.Element and fp.Element) and Fp2 (gnark's E2).
//
// Host+device code: hosttest.cpp and the host stand-in (hostlib.cpp) build it
// with g++; zkpipe.cu with nvcc.
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
