/* zkpipe.h — the C ABI of libzkpipe_cuda.so (zkpipe.cu, built with nvcc) and
 * of its host stand-in (hostlib.cpp, built with g++), as gpu/cuda_load.go
 * declares it for purego. Change both sides together and bump
 * ZK_ABI_VERSION: the Go side refuses a library whose zk_abi_version does not
 * return the version and the struct sizes it was built for.
 *
 * Conventions:
 *   - every entry point but zk_abi_version and zk_default_config returns 0 on success, else a
 *     nonzero code, and then writes a NUL-terminated message of at most
 *     ZK_ERR_BYTES bytes into err, the caller's buffer of that size: each
 *     call has its own, so concurrent failures never overwrite each other;
 *   - every count and byte size is 64-bit (uint64_t);
 *   - "device pointers" and streams are opaque handles (void *);
 *   - a context (zk_init) is one device with one zk_config; a stream belongs
 *     to the context zk_stream_create was given, and every
 *     call on a stream runs on that device, whichever host thread makes it
 *     (one process may drive several GPUs; Go moves goroutines between
 *     threads, and CUDA's current device is per thread);
 *   - a curve-dependent entry takes the curve's id (ZK_CURVE_*, curves.h's
 *     list: an argument, or zk_msm_args.curve): the scalars are its Fr, the
 *     points its G1 or G2, the sizes zk_abi's for that curve; one context
 *     serves every curve;
 *   - field elements are Montgomery limbs in gnark-crypto's layout (Fr: 4×64
 *     bits on both curves; Fp: 4 on BN254, 6 on BLS12-381), points are
 *     affine (x, y) as gnark lays them out, results are XYZZ.
 */
#ifndef ZKPIPE_H
#define ZKPIPE_H

#include <stdint.h>

#include "curves.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZK_ABI_VERSION 15 /* 15: zk_abi's sizes a curve, curves.h's list; 14: zk_config.msm_piece_log; 13: zk_config.wait_poll_us; 12: zk_msm_table_layout by group; 11: zk_fixed_base; 10: curve ids (BLS12-381); 9: zk_config at zk_init, contexts, one zk_msm */
#define ZK_ERR_BYTES 512
#define ZK_MAX_WINDOWS 64 /* an MSM returns at most this many window sums */
#define ZK_MAX_BATCH 64   /* scalar vectors one batched MSM takes at most (ABI 7) */

/* The curves' ids, ZK_CURVE_BN254 = 0, ZK_CURVE_BLS12_381 = 1 (curves.h;
 * ABI 10), and how many there are. */
#define ZK_CURVE_ID_(a, ID, ...) ZK_CURVE_##ID,
enum { ZK_CURVES(ZK_CURVE_ID_, ~) ZK_CURVE_COUNT };

/* zk_curve_abi: one curve's sizes in zk_abi, each in bytes. */
typedef struct {
    uint32_t fr_bytes;        /* 32 (BN254, BLS12-381) */
    uint32_t g1_affine_bytes; /* 64, 96 */
    uint32_t g2_affine_bytes; /* 128, 192 */
    uint32_t g1_xyzz_bytes;   /* 128, 192 */
    uint32_t g2_xyzz_bytes;   /* 256, 384 */
} zk_curve_abi;

/* zk_abi: the sizes both sides share, each in bytes (max_windows and
 * curve_count excepted). */
typedef struct {
    uint32_t abi_bytes;      /* sizeof(zk_abi) */
    uint32_t err_bytes;      /* ZK_ERR_BYTES */
    uint32_t max_windows;    /* ZK_MAX_WINDOWS */
    uint32_t pointer_bytes;  /* 8 */
    uint32_t count_bytes;    /* sizeof(uint64_t): counts are 64-bit */
    uint32_t config_bytes;   /* sizeof(zk_config) (ABI 9) */
    uint32_t msm_args_bytes; /* sizeof(zk_msm_args) (ABI 9) */
    uint32_t curve_count;    /* ZK_CURVE_COUNT (ABI 15) */
    zk_curve_abi curves[ZK_CURVE_COUNT]; /* by ZK_CURVE_* (ABI 15) */
} zk_abi;

/* zk_abi_version fills *out (when not NULL) and returns ZK_ABI_VERSION. */
uint32_t zk_abi_version(zk_abi *out);

/* zk_config: the library's knobs, given once to zk_init, which keeps them
 * in the context it makes (one per engine and device: two contexts in one
 * process may differ), as ICICLE's MSMConfig with default_msm_config().
 * zk_default_config writes the defaults; every field's 0 is its default as
 * well, so a zeroed struct with config_bytes set is the default config.
 * A value out of range fails zk_init, naming the field. (ABI 9: these were
 * environment variables, read once a process.) */
typedef struct {
    uint32_t config_bytes; /* sizeof(zk_config), for the version check */
    int32_t msm_window;    /* window bits of every MSM and table layout, 4 to 24; 0: by size */
    int32_t msm_chunk;     /* points a thread sums a level, 2 to 256; 0: by group (32; BLS12-381 G1 64, G2 128) */
    int32_t msm_segment;   /* buckets a segment thread reduces, a power of two 2 to 256; 0: by size */
    int32_t spin;          /* 1: host threads spin while they wait for the device (CUDA's default);
                              0: they sleep (blocking sync, or polling: wait_poll_us). The device's flag
                              is the process's: the last zk_init of a device sets it for every context on it */
    int32_t wait_poll_us;  /* without spin, an MSM's host thread sleeps through its level 0, then looks
                              at the rest every this many µs, 1 to 1000, sleeping in between (0: 20);
                              -1: it sleeps until CUDA wakes it (blocking sync throughout). (ABI 13) */
    int32_t msm_piece_log; /* an MSM of more than 2^msm_piece_log scalars runs in pieces of that many, their
                              window sums added, so that its scratch is bounded whatever its size
                              (zk_msm_scratch_bytes): 10 to 30; 0: 24 (about 6 GiB of scratch). (ABI 14) */
} zk_config;

/* zk_default_config fills *out with the defaults (config_bytes included). */
void zk_default_config(zk_config *out);

/* zk_init selects device dev, raises its memory pool's release threshold,
 * checks *cfg and makes a context for it (*ctx, freed by zk_fini after the
 * context's streams are destroyed), and writes the device's name (namelen
 * bytes at most) and total memory. */
int zk_init(int32_t dev, const zk_config *cfg, void **ctx, char *name, int32_t namelen, uint64_t *mem_total,
            char *err);
int zk_fini(void *ctx, char *err);
/* zk_device_count: how many devices the library can drive. */
int zk_device_count(int32_t *n, char *err);
/* zk_mem_info: device dev's memory a new allocation can use now (free in the
 * driver plus what the stream-ordered pool holds unused) and the total. */
int zk_mem_info(int32_t dev, uint64_t *free_bytes, uint64_t *total, char *err);

int zk_host_alloc(void **p, uint64_t bytes, char *err); /* pinned, portable to every device, touched once */
int zk_host_free(void *p, char *err);
int zk_stream_create(void *ctx, void **s, char *err); /* a stream on ctx's device, with ctx's config */
int zk_stream_destroy(void *s, char *err); /* waits for the stream's work first */
int zk_stream_sync(void *s, char *err);
int zk_dev_alloc(void **p, uint64_t bytes, void *s, char *err);
int zk_dev_free(void *p, void *s, char *err);
int zk_memset(void *p, uint64_t bytes, void *s, char *err);
/* zk_upload copies bytes of pageable host memory through two pinned bounce
 * buffers of pin_bytes each; it returns when the data are on the device. */
int zk_upload(void *dst, const void *src, uint64_t bytes, void *pin0, void *pin1, uint64_t pin_bytes, void *s,
              char *err);
int zk_download(void *dst, const void *src, uint64_t bytes, void *s, char *err);
/* zk_h2d_async queues a copy of bytes of pinned host memory (zk_host_alloc's)
 * to the device on stream s and returns at once: src must stay untouched
 * until zk_stream_sync(s). The CPU fills one pinned buffer while the other
 * is copied (pin/transfer's classification writes straight into them). */
int zk_h2d_async(void *dst, const void *src, uint64_t bytes, void *s, char *err);

/* zk_domain_tables: tw[k] = ω^k and twinv[k] = ω^−k for k < n/2; the coset
 * scales g^j/n and g^−j/n of j < n in two levels each (ABI 14), gn and
 * ginvn of 2^h + 2^(logn−h) elements, h = ⌈logn/2⌉: the scale of j is
 * t[j mod 2^h]·t[2^h + (j >> h)], t[jl] = g^jl and t[2^h + jh] =
 * g^(jh·2^h)/n (for ginvn, g⁻¹'s). consts: ω, ω⁻¹, g, g⁻¹, 1/n, 1. */
int zk_domain_tables(int32_t curve, void *tw, void *twinv, void *gn, void *ginvn, int32_t logn,
                     const uint64_t *consts, void *s, char *err);
/* zk_compute_h: h from a, b, c into a. conv 0: gnark's (a·b − c)/Z on the
 * coset, h bit-reversed; conv 1: snarkjs's a·b − c on the odd coset. It
 * only issues the work: h is ready in s's stream order (the next call on s,
 * an MSM or a download, reads it); it does not wait for the GPU. side0 and
 * side1 (NULL, or streams of s's device that the caller holds) run b's and
 * c's NTTs beside a's, forked from and joined back to s by events. (ABI 4.) */
int zk_compute_h(int32_t curve, void *a, void *b, void *c, int32_t logn, const void *tw, const void *twinv,
                 const void *gn, const void *ginvn, int32_t conv, const uint64_t *zinv, void *s, void *side0,
                 void *side1, char *err);
/* zk_bench_ntt: mean device time of one forward NTT of x over reps runs. */
int zk_bench_ntt(int32_t curve, void *x, int32_t logn, const void *tw, int32_t reps, float *ms, void *s, char *err);

/* zk_msm_args: one MSM call, k ≤ ZK_MAX_BATCH MSMs over the same bases in
 * one run (k = 1: one MSM; more: cross-proof batching of a circuit's tail
 * MSMs). Vector j is the n[j] scalars at scalars[j] against
 * bases[idx[j] ? idx[j][i] : i] (idx NULL: every vector dense); scalars,
 * idx and n are host arrays of k entries, pointing at device memory; an
 * n[j] of 0 is allowed (its sums are ∞). (ABI 9: one entry point for what
 * were zk_msm_g1, _g2, _table_g1, _table_g2, _batch_g1, _table_batch_g1.) */
typedef struct {
    uint32_t args_bytes;          /* sizeof(zk_msm_args), for the version check */
    int32_t g2;                   /* 0: G1 bases and sums; 1: G2 */
    const void *bases;            /* the bases, or with table ≠ 0 their table (zk_precompute_*) */
    uint64_t nbase;               /* table only: the bases the table was built over */
    int32_t table;                /* bases is a table of nbase bases */
    uint32_t k;                   /* vectors, 1 to ZK_MAX_BATCH */
    const void *const *scalars;   /* k device pointers */
    const uint32_t *const *idx;   /* k device pointers (NULL entries: dense), or NULL */
    const uint64_t *n;            /* k counts */
    int32_t curve;                /* ZK_CURVE_* (ABI 10) */
    uint32_t pad;
} zk_msm_args;

/* zk_msm: the window sums of a's MSMs: vector j's at out[j·(*nw) + w],
 * out having room for k·ZK_MAX_WINDOWS XYZZ points of a's group; *c bits
 * a window, *nw windows a vector, the same for every vector (over a table
 * *nw = 1, the whole MSM in out[j]; *nw = 0 when every n[j] is 0). The
 * caller combines the windows. */
int zk_msm(const zk_msm_args *a, void *out, int32_t *c, int32_t *nw, void *s, char *err);
/* zk_msm_table_layout: the window (*c bits) and windows (*nw) of a
 * precomputed table of nbase G1 (g2 = 0) or G2 bases under ctx's config,
 * which holds *nw·nbase affine points; fails when the table cannot be
 * addressed (nw·nbase ≥ 2^31). The groups' layouts can differ (BLS12-381's
 * G1 takes wider windows from 2^24 bases). */
int zk_msm_table_layout(void *ctx, int32_t curve, uint64_t nbase, int32_t g2, int32_t *c, int32_t *nw, char *err);
/* zk_msm_scratch_bytes: *out = a bound on the device bytes an MSM of n
 * scalars holds at once over G1 (g2 = 0) or G2 bases, as ctx's config
 * plans it. */
int zk_msm_scratch_bytes(void *ctx, int32_t curve, uint64_t n, int32_t g2, uint64_t *out, char *err);
/* zk_precompute_g1/g2: table[w·nbase + i] = 2^(c·w)·bases[i] (the layout's c
 * and nw under s's context), into table (allocated by the caller); returns
 * when done. */
int zk_precompute_g1(int32_t curve, const void *bases, uint64_t nbase, void *table, void *s, char *err);
int zk_precompute_g2(int32_t curve, const void *bases, uint64_t nbase, void *table, void *s, char *err);
/* zk_ones_g1/g2: the sum of bases[j] for the set bits j < n of bitmap. */
int zk_ones_g1(int32_t curve, const void *bases, const uint64_t *bitmap, uint64_t n, void *out, void *s, char *err);
int zk_ones_g2(int32_t curve, const void *bases, const uint64_t *bitmap, uint64_t n, void *out, void *s, char *err);

/* zk_fixed_base: out[i] = scalars[i]·base for i < n in G1 (g2 = 0) or G2
 * of curve (ABI 11): a Groth16 setup's fixed-base products. base (one
 * affine point), scalars (n Montgomery Fr) and out (n affine points, (0, 0)
 * for infinity) are HOST memory, as gnark lays them out; the library
 * builds a table of the base's signed c-bit window multiples on the device
 * (c = 0: chosen by n; 2 to 20 otherwise), takes the scalars in chunks of
 * at most 2^22 (bounded device memory) on stream s and returns when out is
 * written. */
int zk_fixed_base(int32_t curve, int32_t g2, int32_t c, const void *base, const void *scalars, uint64_t n, void *out,
                  void *s, char *err);

#ifdef __cplusplus
}
#endif

#endif
