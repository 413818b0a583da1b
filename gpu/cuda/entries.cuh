// entries.cuh — the C API of zkpipe.h, listed once: both libraries
// (zkpipe.cu with nvcc, the host stand-in hostlib.cpp with g++) include it
// at their end and so get the same entry points, with the same signatures,
// each opening the caller's error buffer (ErrScope) the same way. What a
// library supplies before including it:
//
//   ZK_PART_1(…) … ZK_PART_4(…)  its arguments where this translation unit
//                builds that part (zkpipe.cu's ZK_PART, build.sh), else
//                nothing; the stand-in builds every part in one unit
//   dev_<name>(…) for each ZK_DEVICE entry: the entry without its err
//                argument, the library's own (CUDA calls, or host memory)
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
#define ZK_IN_PART(part, ...) ZK_PART_##part(__VA_ARGS__)

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

// the NTT: H forks side streams, and the bench times with the GPU's events
ZK_DEVICE(1, zk_compute_h,
          (void *a, void *b, void *c, int32_t logn, const void *tw, const void *twinv, const void *gn,
           const void *ginvn, int32_t conv, const uint64_t *zinv, void *s, void *side0, void *side1),
          (a, b, c, logn, tw, twinv, gn, ginvn, conv, zinv, s, side0, side1))
ZK_DEVICE(1, zk_bench_ntt, (void *x, int32_t logn, const void *tw, int32_t reps, float *ms, void *s),
          (x, logn, tw, reps, ms, s))
ZK_DRIVER(1, zk_domain_tables,
          (void *tw, void *twinv, void *gn, void *ginvn, int32_t logn, const uint64_t *consts, void *s), s, false,
          domain_tables_run(d, (Fr *)tw, (Fr *)twinv, (Fr *)gn, (Fr *)ginvn, logn, (const Fr *)consts))

// MSM planning by the context's config
ZK_CONFIG(1, zk_msm_table_layout, (void *ctx, uint64_t nbase, int32_t *c, int32_t *nw), ctx,
          msm_table_layout_raw(t, nbase, c, nw))
ZK_CONFIG(1, zk_msm_scratch_bytes, (void *ctx, uint64_t n, int32_t g2, uint64_t *out), ctx,
          (*out = g2 ? msm_scratch_bytes<Fp2>(n, t) : msm_scratch_bytes<Fp>(n, t), 0))

// tables and ones: G1 in part 2, G2 in part 4
ZK_DRIVER(2, zk_precompute_g1, (const void *bases, uint64_t nbase, void *table, void *s), s, false,
          msm_precompute_raw<Fp>(d, t, bases, nbase, table))
ZK_DRIVER(4, zk_precompute_g2, (const void *bases, uint64_t nbase, void *table, void *s), s, false,
          msm_precompute_raw<Fp2>(d, t, bases, nbase, table))
ZK_DRIVER(2, zk_ones_g1, (const void *bases, const uint64_t *bitmap, uint64_t n, void *out, void *s), s, true,
          ones_run<Fp>(d, (const Affine<Fp> *)bases, bitmap, n, (XYZZ<Fp> *)out))
ZK_DRIVER(4, zk_ones_g2, (const void *bases, const uint64_t *bitmap, uint64_t n, void *out, void *s), s, true,
          ones_run<Fp2>(d, (const Affine<Fp2> *)bases, bitmap, n, (XYZZ<Fp2> *)out))

// ─── zk_msm: one entry, its G1 half in part 2 and its G2 half in part 3 ─────

// msm_g1_half and msm_g2_half run inside zk_msm's error scope; C++ names,
// not part of zkpipe.h.
int msm_g1_half(const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s);
int msm_g2_half(const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s);
ZK_PART_2(int msm_g1_half(const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s) {
    ZK_OPEN(s, true);
    return msm_raw<Fp>(d, t, *a, out, c, nw);
})
ZK_PART_3(int msm_g2_half(const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s) {
    ZK_OPEN(s, true);
    return msm_raw<Fp2>(d, t, *a, out, c, nw);
})
ZK_PART_1(extern "C" int zk_msm(const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s, char *err) {
    ErrScope es_(err);
    if (!a || a->args_bytes != sizeof(zk_msm_args))
        return FAILF("msm: args of %u bytes, this library's are %zu", a ? a->args_bytes : 0, sizeof(zk_msm_args));
    if (a->g2 != 0 && a->g2 != 1) return FAILF("msm: group %d, want 0 (G1) or 1 (G2)", a->g2);
    return a->g2 ? msm_g2_half(a, out, c, nw, s) : msm_g1_half(a, out, c, nw, s);
})
