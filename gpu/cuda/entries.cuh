// entries.cuh — the C API of zkpipe.h, listed once: both libraries
// (zkpipe.cu with nvcc, the host stand-in hostlib.cpp with g++) include it
// at their end and so get the same entry points, with the same signatures,
// each opening the caller's error buffer (ErrScope) the same way. What a
// library supplies before including it:
//
//   ZK_PART_0(…) … ZK_PART_16(…)  its arguments where this translation
//                unit builds that part (zkpipe.cu's ZK_PART, build.sh), else
//                nothing (part 0: no part, always nothing); the stand-in
//                builds every part in one unit
//   dev_<name>(…) for each ZK_DEVICE entry: the entry without its err
//                argument, the library's own (CUDA calls, or host memory);
//                dev_compute_h<S> and dev_bench_ntt<S>, over the scalars S
//                of the curve the entry's id names
//   ZK_OPEN(s, busy)  statements that open a call on stream s: declare d,
//                the driver's device on s (CudaDev, HostDev), and t, the
//                MsmTuning of s's context; busy: the call runs kernels
//                (the stand-in marks the stream busy for its length)
//   ZK_OPEN_CTX(ctx)  statements that declare t, the MsmTuning of context ctx
//
// ZK_DRIVER entries are written here once, over driver.cuh: the very same
// body runs on the GPU and in CI. A new entry point goes in this list, in
// zkpipe.h, and in gpu/cuda_load.go's symbol table.
#pragma once

#include "driver.cuh"
#include "errors.cuh"
#include "zkpipe.h"

#define ZK_UNPAREN(...) __VA_ARGS__

// ZK_DEVICE(part, name, params, args): name(params…, char *err) calls
// dev_name(args…) inside the call's error scope.
#define ZK_DEVICE(part, name, params, args)                                                                            \
    ZK_IN_PART(part, extern "C" int name(ZK_UNPAREN params, char *err) {                                             \
        ErrScope es_(err);                                                                                             \
        return dev_##name args;                                                                                        \
    })

// ZK_DRIVER(part, name, params, s, busy, body): name(params…, char *err)
// opens stream s and returns body, a driver.cuh call over d and t.
#define ZK_DRIVER(part, name, params, s, busy, ...)                                                                    \
    ZK_IN_PART(part, extern "C" int name(ZK_UNPAREN params, char *err) {                                             \
        ErrScope es_(err);                                                                                             \
        ZK_OPEN(s, busy);                                                                                              \
        return __VA_ARGS__;                                                                                            \
    })

// ZK_HALF(part, name, params, s, busy, body): a C++ function of the part
// that builds it, declared in every part: one curve's and group's half of
// an entry (the kernels of each live in one part), over d and t of stream s.
#define ZK_HALF(part, name, params, s, busy, ...)                                                                      \
    int name params;                                                                                                   \
    ZK_IN_PART(part, int name params {                                                                                 \
        ZK_OPEN(s, busy);                                                                                              \
        return __VA_ARGS__;                                                                                            \
    })

// ZK_BY_CURVE(what, curve, E): returns E(name, C), the expression E makes
// of the curve named by id curve (name and traits C: curves.h's entry), or
// fails naming it. E is a macro each entry defines before it.
#define ZK_BY_CURVE_CASE_(E, ID, name, label, C, ...)                                                                  \
    case ZK_CURVE_##ID:                                                                                                \
        return E(name, C);
#define ZK_CURVE_LABEL_(a, ID, name, label, ...) " " label
#define ZK_BY_CURVE(what, curve, E)                                                                                    \
    switch (curve) {                                                                                                   \
        ZK_CURVES(ZK_BY_CURVE_CASE_, E)                                                                                \
    }                                                                                                                  \
    return FAILF("%s: curve %d, want 0 to %d (in order:" ZK_CURVES(ZK_CURVE_LABEL_, ~) ")", what, (int)(curve),      \
                 ZK_CURVE_COUNT - 1)

// ZK_CONFIG(part, name, params, ctx, body): as ZK_DRIVER, for an entry that
// only plans by context ctx's config (no stream, no device work).
#define ZK_CONFIG(part, name, params, ctx, ...)                                                                        \
    ZK_IN_PART(part, extern "C" int name(ZK_UNPAREN params, char *err) {                                             \
        ErrScope es_(err);                                                                                             \
        ZK_OPEN_CTX(ctx);                                                                                              \
        return __VA_ARGS__;                                                                                            \
    })

// ─── the list ────────────────────────────────────────────────────────────────

// device, context, memory, streams, copies: the library's own
ZK_DEVICE(1, zk_init, (int32_t dev, const zk_config *cfg, void **ctx, char *name, int32_t namelen, uint64_t *mem_total),
          (dev, cfg, ctx, name, namelen, mem_total))
ZK_DEVICE(1, zk_fini, (void *ctx), (ctx))
ZK_DEVICE(1, zk_device_count, (int32_t *n), (n))
ZK_DEVICE(1, zk_mem_info, (int32_t dev, uint64_t *free_bytes, uint64_t *total), (dev, free_bytes, total))
ZK_DEVICE(1, zk_host_alloc, (void **p, uint64_t bytes), (p, bytes))
ZK_DEVICE(1, zk_host_free, (void *p), (p))
ZK_DEVICE(1, zk_stream_create, (void *ctx, void **s), (ctx, s))
ZK_DEVICE(1, zk_stream_destroy, (void *s), (s))
ZK_DEVICE(1, zk_stream_sync, (void *s), (s))
ZK_DEVICE(1, zk_dev_alloc, (void **p, uint64_t bytes, void *s), (p, bytes, s))
ZK_DEVICE(1, zk_dev_free, (void *p, void *s), (p, s))
ZK_DEVICE(1, zk_memset, (void *p, uint64_t bytes, void *s), (p, bytes, s))
ZK_DEVICE(1, zk_upload,
          (void *dst, const void *src, uint64_t bytes, void *pin0, void *pin1, uint64_t pin_bytes, void *s),
          (dst, src, bytes, pin0, pin1, pin_bytes, s))
ZK_DEVICE(1, zk_download, (void *dst, const void *src, uint64_t bytes, void *s), (dst, src, bytes, s))
ZK_DEVICE(1, zk_h2d_async, (void *dst, const void *src, uint64_t bytes, void *s), (dst, src, bytes, s))

// the NTT over the curve's Fr: H forks side streams, and the bench times
// with the GPU's events
#define ZK_E_COMPUTE_H(name, C) dev_compute_h<C::Fr>(a, b, c, logn, tw, twinv, gn, ginvn, conv, zinv, s, side0, side1)
ZK_PART_1(extern "C" int zk_compute_h(int32_t curve, void *a, void *b, void *c, int32_t logn, const void *tw,
                                      const void *twinv, const void *gn, const void *ginvn, int32_t conv,
                                      const uint64_t *zinv, void *s, void *side0, void *side1, char *err) {
    ErrScope es_(err);
    ZK_BY_CURVE("compute h", curve, ZK_E_COMPUTE_H);
})
#define ZK_E_BENCH_NTT(name, C) dev_bench_ntt<C::Fr>(x, logn, tw, reps, ms, s)
ZK_PART_1(extern "C" int zk_bench_ntt(int32_t curve, void *x, int32_t logn, const void *tw, int32_t reps, float *ms,
                                      void *s, char *err) {
    ErrScope es_(err);
    ZK_BY_CURVE("bench ntt", curve, ZK_E_BENCH_NTT);
})
#define ZK_E_DOMAIN(name, C)                                                                                           \
    domain_tables_run(d, (C::Fr *)tw, (C::Fr *)twinv, (C::Fr *)gn, (C::Fr *)ginvn, logn, (const C::Fr *)consts)
ZK_PART_1(extern "C" int zk_domain_tables(int32_t curve, void *tw, void *twinv, void *gn, void *ginvn, int32_t logn,
                                          const uint64_t *consts, void *s, char *err) {
    ErrScope es_(err);
    ZK_OPEN(s, false);
    ZK_BY_CURVE("domain", curve, ZK_E_DOMAIN);
})

// MSM planning by the context's config
#define ZK_E_TABLE_LAYOUT(name, C)                                                                                     \
    g2 ? msm_table_layout_raw<C::Fp2>(t, nbase, c, nw) : msm_table_layout_raw<C::Fp>(t, nbase, c, nw)
ZK_PART_1(extern "C" int zk_msm_table_layout(void *ctx, int32_t curve, uint64_t nbase, int32_t g2, int32_t *c,
                                             int32_t *nw, char *err) {
    ErrScope es_(err);
    ZK_OPEN_CTX(ctx);
    ZK_BY_CURVE("msm table", curve, ZK_E_TABLE_LAYOUT);
})
#define ZK_E_SCRATCH(name, C) (*out = g2 ? msm_scratch_bytes<C::Fp2>(n, t) : msm_scratch_bytes<C::Fp>(n, t), 0)
ZK_PART_1(extern "C" int zk_msm_scratch_bytes(void *ctx, int32_t curve, uint64_t n, int32_t g2, uint64_t *out,
                                              char *err) {
    ErrScope es_(err);
    ZK_OPEN_CTX(ctx);
    ZK_BY_CURVE("msm scratch", curve, ZK_E_SCRATCH);
})

// ─── the group kernels' halves, a part each (curves.h: BN254's G1 in part
// 2, its G2 MSM in 3, its G2 tables and ones in 4; BLS12-381's in 5, 6 and
// 7) (C++ names, not part of zkpipe.h) ─────────────────────────────────────

#define ZK_PRECOMPUTE_PARAMS (const void *bases, uint64_t nbase, void *table, void *s)
#define ZK_ONES_PARAMS (const void *bases, const uint64_t *bitmap, uint64_t n, void *out, void *s)
#define ZK_MSM_PARAMS (const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s)
#define ZK_FIXED_BASE_PARAMS (int32_t c, const void *base, const void *scalars, uint64_t n, void *out, void *s)
#define ZK_GROUP_HALVES(F, g1part, g2part, g2tabpart, curve)                                                         \
    ZK_HALF(g1part, precompute_##curve##_g1, ZK_PRECOMPUTE_PARAMS, s, false,                                          \
            msm_precompute_raw<F>(d, t, bases, nbase, table))                                                          \
    ZK_HALF(g2tabpart, precompute_##curve##_g2, ZK_PRECOMPUTE_PARAMS, s, false,                                       \
            msm_precompute_raw<Fp2T<F>>(d, t, bases, nbase, table))                                                    \
    ZK_HALF(g1part, ones_##curve##_g1, ZK_ONES_PARAMS, s, true,                                                        \
            ones_run<F>(d, (const Affine<F> *)bases, bitmap, n, (XYZZ<F> *)out))                                      \
    ZK_HALF(g2tabpart, ones_##curve##_g2, ZK_ONES_PARAMS, s, true,                                                     \
            ones_run<Fp2T<F>>(d, (const Affine<Fp2T<F>> *)bases, bitmap, n, (XYZZ<Fp2T<F>> *)out))                    \
    ZK_HALF(g1part, msm_##curve##_g1, ZK_MSM_PARAMS, s, true, msm_raw<F>(d, t, *a, out, c, nw))                       \
    ZK_HALF(g2part, msm_##curve##_g2, ZK_MSM_PARAMS, s, true, msm_raw<Fp2T<F>>(d, t, *a, out, c, nw))              \
    ZK_HALF(g1part, fixed_base_##curve##_g1, ZK_FIXED_BASE_PARAMS, s, true,                                          \
            fixed_base_run<F>(d, c, (const Affine<F> *)base, (const ScalarOf<F> *)scalars, n, (Affine<F> *)out))      \
    ZK_HALF(g2tabpart, fixed_base_##curve##_g2, ZK_FIXED_BASE_PARAMS, s, true,                                       \
            fixed_base_run<Fp2T<F>>(d, c, (const Affine<Fp2T<F>> *)base, (const ScalarOf<Fp2T<F>> *)scalars, n,     \
                                    (Affine<Fp2T<F>> *)out))
#define ZK_GROUP_HALVES_OF_(a, ID, name, label, C, g1, g2, g2tab, ...) ZK_GROUP_HALVES(C::Fp, g1, g2, g2tab, name)
ZK_CURVES(ZK_GROUP_HALVES_OF_, ~)

// ─── the group entries: by curve and group, to the halves ───────────────────

#define ZK_E_PRECOMPUTE_G1(name, C) precompute_##name##_g1(bases, nbase, table, s)
ZK_PART_1(extern "C" int zk_precompute_g1(int32_t curve, const void *bases, uint64_t nbase, void *table, void *s,
                                          char *err) {
    ErrScope es_(err);
    ZK_BY_CURVE("precompute g1", curve, ZK_E_PRECOMPUTE_G1);
})
#define ZK_E_PRECOMPUTE_G2(name, C) precompute_##name##_g2(bases, nbase, table, s)
ZK_PART_1(extern "C" int zk_precompute_g2(int32_t curve, const void *bases, uint64_t nbase, void *table, void *s,
                                          char *err) {
    ErrScope es_(err);
    ZK_BY_CURVE("precompute g2", curve, ZK_E_PRECOMPUTE_G2);
})
#define ZK_E_ONES_G1(name, C) ones_##name##_g1(bases, bitmap, n, out, s)
ZK_PART_1(extern "C" int zk_ones_g1(int32_t curve, const void *bases, const uint64_t *bitmap, uint64_t n, void *out,
                                    void *s, char *err) {
    ErrScope es_(err);
    ZK_BY_CURVE("ones g1", curve, ZK_E_ONES_G1);
})
#define ZK_E_ONES_G2(name, C) ones_##name##_g2(bases, bitmap, n, out, s)
ZK_PART_1(extern "C" int zk_ones_g2(int32_t curve, const void *bases, const uint64_t *bitmap, uint64_t n, void *out,
                                    void *s, char *err) {
    ErrScope es_(err);
    ZK_BY_CURVE("ones g2", curve, ZK_E_ONES_G2);
})
#define ZK_E_MSM(name, C) a->g2 ? msm_##name##_g2(a, out, c, nw, s) : msm_##name##_g1(a, out, c, nw, s)
ZK_PART_1(extern "C" int zk_msm(const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s, char *err) {
    ErrScope es_(err);
    if (!a || a->args_bytes != sizeof(zk_msm_args))
        return FAILF("msm: args of %u bytes, this library's are %zu", a ? a->args_bytes : 0, sizeof(zk_msm_args));
    if (a->g2 != 0 && a->g2 != 1) return FAILF("msm: group %d, want 0 (G1) or 1 (G2)", a->g2);
    ZK_BY_CURVE("msm", a->curve, ZK_E_MSM);
})
#define ZK_E_FIXED_BASE(name, C)                                                                                       \
    g2 ? fixed_base_##name##_g2(c, base, scalars, n, out, s) : fixed_base_##name##_g1(c, base, scalars, n, out, s)
ZK_PART_1(extern "C" int zk_fixed_base(int32_t curve, int32_t g2, int32_t c, const void *base, const void *scalars,
                                       uint64_t n, void *out, void *s, char *err) {
    ErrScope es_(err);
    if (g2 != 0 && g2 != 1) return FAILF("fixed base: group %d, want 0 (G1) or 1 (G2)", g2);
    ZK_BY_CURVE("fixed base", curve, ZK_E_FIXED_BASE);
})
