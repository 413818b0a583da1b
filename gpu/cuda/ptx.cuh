// ptx.cuh — 32-bit multiply-add and add/sub carry chains, the building
// blocks of field.cuh's products on 2·LIMBS 32-bit limbs (eight for BN254).
//
// Each function is one PTX instruction, named after it. On the device the
// carry flag (CC.CF) lives in the hardware and the `cc` argument is unused:
// chains rely on consecutive `asm volatile` statements keeping their order,
// as sppark's mont_t does. On the host each is an exact emulation with the
// flag in `cc`, so hosttest.cpp and the host stand-in run the very chains the
// GPU runs, dropped carries included.
#pragma once

#include <stdint.h>

#ifdef __CUDACC__
#define HD __host__ __device__ __forceinline__
#else
#define HD inline
#endif

typedef uint64_t u64;
typedef uint32_t u32;

#ifdef __CUDA_ARCH__
#define ZK_PTX3(op, a, b, c)                                                              \
    u32 d;                                                                                \
    asm volatile(op " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));               \
    return d
#define ZK_PTX2(op, a, b)                                                                 \
    u32 d;                                                                                \
    asm volatile(op " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));                           \
    return d
#endif

HD u32 mul_lo(u32 a, u32 b) { return a * b; }

HD u32 mul_hi(u32 a, u32 b) {
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (u32)(((u64)a * b) >> 32);
#endif
}

// mad.lo.cc: lo(a·b) + c, carry out.
HD u32 mad_lo_cc(u32 a, u32 b, u32 c, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX3("mad.lo.cc.u32", a, b, c);
#else
    u64 t = (u64)(u32)(a * b) + c;
    cc = (u32)(t >> 32);
    return (u32)t;
#endif
}

// madc.lo.cc: lo(a·b) + c + carry in, carry out.
HD u32 madc_lo_cc(u32 a, u32 b, u32 c, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX3("madc.lo.cc.u32", a, b, c);
#else
    u64 t = (u64)(u32)(a * b) + c + cc;
    cc = (u32)(t >> 32);
    return (u32)t;
#endif
}

// madc.hi.cc: hi(a·b) + c + carry in, carry out.
HD u32 madc_hi_cc(u32 a, u32 b, u32 c, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX3("madc.hi.cc.u32", a, b, c);
#else
    u64 t = (((u64)a * b) >> 32) + c + cc;
    cc = (u32)(t >> 32);
    return (u32)t;
#endif
}

// madc.hi: hi(a·b) + c + carry in; the carry out is dropped.
HD u32 madc_hi(u32 a, u32 b, u32 c, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX3("madc.hi.u32", a, b, c);
#else
    return (u32)((((u64)a * b) >> 32) + c + cc);
#endif
}

// add.cc: a + b, carry out.
HD u32 add_cc(u32 a, u32 b, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX2("add.cc.u32", a, b);
#else
    u64 t = (u64)a + b;
    cc = (u32)(t >> 32);
    return (u32)t;
#endif
}

// addc.cc: a + b + carry in, carry out.
HD u32 addc_cc(u32 a, u32 b, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX2("addc.cc.u32", a, b);
#else
    u64 t = (u64)a + b + cc;
    cc = (u32)(t >> 32);
    return (u32)t;
#endif
}

// addc: a + b + carry in; the carry out is dropped.
HD u32 addc(u32 a, u32 b, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX2("addc.u32", a, b);
#else
    return a + b + cc;
#endif
}

// sub.cc: a − b, borrow out (CC.CF is the borrow in subtraction chains).
HD u32 sub_cc(u32 a, u32 b, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX2("sub.cc.u32", a, b);
#else
    u64 t = (u64)a - b;
    cc = (u32)(t >> 63);
    return (u32)t;
#endif
}

// subc.cc: a − b − borrow in, borrow out.
HD u32 subc_cc(u32 a, u32 b, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX2("subc.cc.u32", a, b);
#else
    u64 t = (u64)a - b - cc;
    cc = (u32)(t >> 63);
    return (u32)t;
#endif
}

// subc: a − b − borrow in; the borrow out is dropped.
HD u32 subc(u32 a, u32 b, u32 &cc) {
#ifdef __CUDA_ARCH__
    (void)cc;
    ZK_PTX2("subc.u32", a, b);
#else
    return a - b - cc;
#endif
}
