// curve.cuh — BN254 points for zkpipe's CUDA backend: affine points as gnark
// lays them out, and XYZZ coordinates with their additions.
#pragma once

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
#if ZK_FIELD_MUL != 64
template <> HD Fp mul_sub<Fp>(const Fp &a, const Fp &b, const Fp &c, const Fp &d) {
    return Fp::dot32(a, b, Fp::zero() - c, d);
}
#endif

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
        Y = mul_sub(R, Q - X3, Y, PPP);
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
