// curve.cuh — points for zkpipe's CUDA backend: affine points as gnark
// lays them out, XYZZ coordinates with their additions (over any field of
// field.cuh), and the curve traits (Bn254, Bls12381: fields and b, b′).
#pragma once

#include "curves.h"
#include "field.cuh"

// Affine point as gnark lays it out (X, Y in Montgomery form); (0, 0) is the
// point at infinity, as gnark's IsInfinity reads it.
template <class F> struct Affine {
    F x, y;
    HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

// mul_sub: a·b − c·d. Over Fp on 32-bit chains it is one dot product
// (dot32: both products in the same rows, one Montgomery reduction: 392
// limb multiply-adds where two products take 528), which the additions'
// and doublings' Y = M·(S − X₃) − W·Y use: about 5% of a mixed addition.
// Over Fp2, and with 64-bit limbs, the two products.
template <class F> HD F mul_sub(const F &a, const F &b, const F &c, const F &d) { return a * b - c * d; }
#if !ZK_MUL64_HERE
template <> HD Fp mul_sub<Fp>(const Fp &a, const Fp &b, const Fp &c, const Fp &d) {
    return Fp::dot32(a, b, Fp::zero() - c, d);
}
// BLS12-381's Fp has dot32's room too (DOT32_OK): 12-limb rows, one
// reduction for both products.
template <>
HD Bls12381Fp mul_sub<Bls12381Fp>(const Bls12381Fp &a, const Bls12381Fp &b, const Bls12381Fp &c,
                                  const Bls12381Fp &d) {
    return Bls12381Fp::dot32(a, b, Bls12381Fp::zero() - c, d);
}
#endif

// LazyCurve: BLS12-381's G1 additions (XYZZ<Bls12381Fp>::add_affine and
// add, the MSM's hot loop) run on lazy intermediates (add_affine_lazy,
// add_lazy: no final subtraction in the products, values in [0, 2q)): 0-2%
// faster G1 MSMs on the H200 than the canonical formulas (notes/
// h200-2026-12-03d.md), which the other fields and the 64-bit products keep.
// hosttest checks the lazy ones against the canonical ones; points in and
// out are canonical either way. (The canonical build of BLS12-381's G1,
// ZK_BLS_LAZY=0, is retired: notes/cuda-variants.md.)
template <class F> struct LazyCurve {
    static constexpr bool ON = false;
};
#if !ZK_MUL64_HERE
template <> struct LazyCurve<Bls12381Fp> {
    static constexpr bool ON = true;
};
#endif

// EarlyZ: the canonical additions over BLS12-381's Fp2 (G2: 96-byte
// coordinates) are ordered so that fewer
// values are live at once: ZZ·PP as soon as Q = X·PP (or U1·PP) has read PP,
// and in add the products with o.ZZ and o.ZZZ right after the checks, not at
// the end. The same formulas, the same products. CUDA 13's spill stores,
// before → after: level0 580 → 572 bytes, levelN 1,248 → 772, k_reduce
// 2,304 → 1,376. Measured on the H100 (notes/h100-2026-12-06b.md, calls 1 and 3):
// the G2 MSM 2^20 27.4 and 27.6 ms against 27.9, 28.0 and 28.0; G1 and
// BN254 keep the old order (hosttest checks both orders: G1's and G2's);
// the old order over Fp2 (ZK_XYZZ_EARLY_Z=0) is retired: notes/cuda-variants.md.
template <class F> struct EarlyZ {
    static constexpr bool ON = sizeof(F) >= 96;
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
        Y = mul_sub(M, S - X3, W, Y);
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
        Y = mul_sub(M, S - X, W, y);
        ZZ = V;
        ZZZ = W;
    }

    // mixed addition with an affine point (madd-2008-s); (x, y) is not infinity.
    HD void add_affine(const F &x, const F &y, const F &one) {
        if constexpr (LazyCurve<F>::ON)
            add_affine_lazy(x, y, one);
        else
            add_affine_eager(x, y, one);
    }
    HD void add_affine_eager(const F &x, const F &y, const F &one) {
        if (is_inf()) {
            X = x;
            Y = y;
            ZZ = one;
            ZZZ = one;
            return;
        }
        F P = x * ZZ - X;
        F R = y * ZZZ - Y;
        finish_affine(P, R, x, y);
    }
    // finish_affine: the mixed addition of (x, y) from P = x·ZZ − X and
    // R = y·ZZZ − Y: the doubling or infinity when P ≡ 0, else the tail.
    HD void finish_affine(const F &P, const F &R, const F &x, const F &y) {
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
        if constexpr (EarlyZ<F>::ON) { // PP's last use: it dies here
            ZZ = ZZ * PP;
            F X3 = R.sqr() - PPP - Q.dbl();
            Y = mul_sub(R, Q - X3, Y, PPP);
            X = X3;
            ZZZ = ZZZ * PPP;
            return;
        }
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = mul_sub(R, Q - X3, Y, PPP);
        X = X3;
        ZZ = ZZ * PP;
        ZZZ = ZZZ * PPP;
    }

    // add_affine_late: add_affine_eager of (x, ±*yp), reading y only once
    // P = x·ZZ − X is known, so that y's registers are not held through
    // P's product (msm.cuh, LateY: BLS12-381's G2 level0).
    HD void add_affine_late(const F &x, const F *yp, bool neg, const F &one) {
        if (is_inf()) {
            X = x;
            Y = neg ? yp->neg() : *yp;
            ZZ = one;
            ZZZ = one;
            return;
        }
        F P = x * ZZ - X;
        F y = *yp;
        if (neg) y = y.neg();
        F R = y * ZZZ - Y;
        finish_affine(P, R, x, y);
    }

    // add_affine_lazy: add_affine with its intermediates lazy, for a field
    // with LAZY_DOT_OK (BLS12-381's Fp). Inputs canonical (X, Y, ZZ, ZZZ, x,
    // y < q); every line's bound, with "< 2q" for a lazy value:
    //   mul_lazy, sqr_lazy of operands < 2q: < 2q (field.cuh, mul_lazy (1));
    //   sub_lazy2q, add_lazy2q, neg_lazy2q of operands < 2q: < 2q;
    //   P, R: ≡ 0 exactly when 0 or q (is_zero_2q), the branches see what
    //   the canonical formula sees;
    //   X3: reduced once (reduce_2q), canonical, as stored and as Y reads it;
    //   Y: dot32 of operands < 2q (LAZY_DOT_OK), canonical after its own
    //   subtraction; ZZ, ZZZ: mul32 (< 2q operands, canonical out).
    // So the point out is canonical, and is_inf (ZZ = 0) reads it as before.
    HD void add_affine_lazy(const F &x, const F &y, const F &one) {
        static_assert(F::LAZY_DOT_OK, "the lazy formulas need 8q < R and dot32's room for lazy operands");
        if (is_inf()) {
            X = x;
            Y = y;
            ZZ = one;
            ZZZ = one;
            return;
        }
        F P = F::sub_lazy2q(F::mul_lazy(x, ZZ), X);
        F R = F::sub_lazy2q(F::mul_lazy(y, ZZZ), Y);
        if (P.is_zero_2q()) {
            if (R.is_zero_2q()) {
                set_dbl_affine(x, y);
            } else {
                *this = inf();
            }
            return;
        }
        finish_lazy(P, R, X, Y);
    }
    // finish_lazy: the tail both lazy additions share: PP = P², PPP = P·PP,
    // Q = U1·PP, X3 = R² − PPP − 2Q, Y3 = R·(Q − X3) − S1·PPP, ZZ·PP,
    // ZZZ·PPP (the caller has put ZZ·ZZ₂ and ZZZ·ZZZ₂ in ZZ, ZZZ for add).
    // P, R, U1, S1 < 2q; P ≢ 0.
    HD void finish_lazy(const F &P, const F &R, const F &U1, const F &S1) {
        F PP = F::sqr_lazy(P);
        F PPP = F::mul_lazy(P, PP);
        F Q = F::mul_lazy(U1, PP);
        F X3 = F::sub_lazy2q(F::sub_lazy2q(F::sqr_lazy(R), PPP), F::add_lazy2q(Q, Q));
        X3 = F::reduce_2q(X3);
        Y = F::dot32(R, F::sub_lazy2q(Q, X3), S1, F::neg_lazy2q(PPP));
        X = X3;
        ZZ = F::mul32(ZZ, PP);
        ZZZ = F::mul32(ZZZ, PPP);
    }

    // add_lazy: add with its intermediates lazy (add_affine_lazy's bounds;
    // U1, U2, S1, S2 and the two partial products ZZ·ZZ₂, ZZZ·ZZZ₂ < 2q).
    HD void add_lazy(const XYZZ &o) {
        static_assert(F::LAZY_DOT_OK, "the lazy formulas need 8q < R and dot32's room for lazy operands");
        if (o.is_inf()) return;
        if (is_inf()) {
            *this = o;
            return;
        }
        F U1 = F::mul_lazy(X, o.ZZ);
        F U2 = F::mul_lazy(o.X, ZZ);
        F S1 = F::mul_lazy(Y, o.ZZZ);
        F S2 = F::mul_lazy(o.Y, ZZZ);
        F P = F::sub_lazy2q(U2, U1);
        F R = F::sub_lazy2q(S2, S1);
        if (P.is_zero_2q()) {
            if (R.is_zero_2q()) {
                dbl_assign();
            } else {
                *this = inf();
            }
            return;
        }
        ZZ = F::mul_lazy(ZZ, o.ZZ);
        ZZZ = F::mul_lazy(ZZZ, o.ZZZ);
        finish_lazy(P, R, U1, S1);
    }

    // add-2008-s.
    HD void add(const XYZZ &o) {
        if constexpr (LazyCurve<F>::ON)
            add_lazy(o);
        else
            add_eager(o);
    }
    HD void add_eager(const XYZZ &o) {
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
        if constexpr (EarlyZ<F>::ON) { // o's ZZ and ZZZ, then PP, die early
            ZZ = ZZ * o.ZZ;
            ZZZ = ZZZ * o.ZZZ;
            F PP = P.sqr();
            F PPP = P * PP;
            F Q = U1 * PP;
            ZZ = ZZ * PP;
            F X3 = R.sqr() - PPP - Q.dbl();
            Y = mul_sub(R, Q - X3, S1, PPP);
            X = X3;
            ZZZ = ZZZ * PPP;
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = U1 * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = mul_sub(R, Q - X3, S1, PPP);
        X = X3;
        ZZ = ZZ * o.ZZ * PP;
        ZZZ = ZZZ * o.ZZZ * PPP;
    }

    // to_affine: (X/ZZ, Y/ZZZ) with one inversion, I = 1/(ZZ·ZZZ):
    // 1/ZZ = I·ZZZ and 1/ZZZ = I·ZZ; (0, 0) for infinity.
    HD Affine<F> to_affine() const {
        Affine<F> r;
        if (is_inf()) {
            r.x = F::zero();
            r.y = F::zero();
            return r;
        }
        F I = (ZZ * ZZZ).inv();
        r.x = X * (I * ZZZ);
        r.y = Y * (I * ZZ);
        return r;
    }

    // mul_small: this ← k·this for a small integer k (double-and-add from
    // k's top bit: a segment's k has about c bits, not 32).
    HD void mul_small(u32 k) {
        XYZZ base = *this;
        XYZZ r = inf();
        int top = 31;
        while (top >= 0 && !((k >> top) & 1)) top--;
        for (int b = top; b >= 0; b--) {
            r.dbl_assign();
            if ((k >> b) & 1) r.add(base);
        }
        *this = r;
    }
};

// field_one<F>: 1 in F, Montgomery form (F::one(); a few fields' written out).
template <class F> HD F field_one() { return F::one(); }
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
template <> HD Bls12381Fp field_one<Bls12381Fp>() { return Bls12381Fp::one(); }
template <> HD Bls12381Fp2 field_one<Bls12381Fp2>() {
    Bls12381Fp2 r;
    r.a0 = Bls12381Fp::one();
    r.a1 = Bls12381Fp::zero();
    return r;
}

// ─── curve traits: a curve's fields and coefficients, one struct a curve ───
//
// G1: y² = x³ + b over Fp; G2 (the twist): y² = x³ + b′ over Fp2; Fr the
// scalars. The MSM kernels are templates over a group's base field F (Fp or
// Fp2 of a curve), the NTT's over a scalar field; GroupOf<F> gives the
// curve of F, so that an MSM over F digs its digits out of that curve's Fr
// (ScalarOf<F>). The C API picks the curve by its id (zkpipe.h, ZK_CURVE_*).
template <class F, class... L> HD F field_from_limbs(L... limbs) {
    static_assert(sizeof...(L) == F::N, "one limb a 64-bit word of the field");
    const u64 l[] = {(u64)limbs...};
    F r;
#pragma unroll
    for (int i = 0; i < F::N; i++) r.v[i] = l[i];
    return r;
}

struct Bn254 {
    typedef ::Fr Fr;
    typedef ::Fp Fp;
    typedef ::Fp2 Fp2;
    HD static Fp b() { // 3
        return field_from_limbs<Fp>(0x7a17caa950ad28d7ULL, 0x1f6ac17ae15521b9ULL, 0x334bea4e696bd284ULL,
                                    0x2a1f6744ce179d8eULL);
    }
    HD static Fp2 b2() { // 3/(9 + u)
        Fp2 r;
        r.a0 = field_from_limbs<Fp>(0x3bf938e377b802a8ULL, 0x020b1b273633535dULL, 0x26b7edf049755260ULL,
                                    0x2514c6324384a86dULL);
        r.a1 = field_from_limbs<Fp>(0x38e7ecccd1dcff67ULL, 0x65f0b37d93ce0d3eULL, 0xd749d0dd22ac00aaULL,
                                    0x0141b9ce4a688d4dULL);
        return r;
    }
};

struct Bls12381 {
    typedef Bls12381Fr Fr;
    typedef Bls12381Fp Fp;
    typedef Bls12381Fp2 Fp2;
    HD static Fp b() { // 4
        return field_from_limbs<Fp>(0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL,
                                    0xb1d37ebee6ba24d7ULL, 0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL);
    }
    HD static Fp2 b2() { // 4(1 + u)
        Fp2 r;
        r.a0 = b();
        r.a1 = b();
        return r;
    }
};

// GroupOf<F>: the curve whose G1 (G2 = false) or G2 (true) has base field
// F, for every curve of curves.h's list.
template <class F> struct GroupOf;
#define ZK_GROUP_OF_(a, ID, name, label, T, ...)                                                                       \
    template <> struct GroupOf<T::Fp> {                                                                                \
        typedef T C;                                                                                                   \
        static constexpr bool G2 = false;                                                                              \
    };                                                                                                                 \
    template <> struct GroupOf<T::Fp2> {                                                                               \
        typedef T C;                                                                                                   \
        static constexpr bool G2 = true;                                                                               \
    };
ZK_CURVES(ZK_GROUP_OF_, ~)
#undef ZK_GROUP_OF_
// ScalarOf<F>: the scalars of an MSM over F.
template <class F> using ScalarOf = typename GroupOf<F>::C::Fr;
