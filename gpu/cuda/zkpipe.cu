// zkpipe.cu — the kernels of libzkpipe_cuda.so and its C API (zkpipe.h),
// which gpu/cuda_load.go loads at run time with purego.
//
// The drivers (planning, order of steps, scratch, errors) are driver.cuh's,
// shared with the host stand-in (hostlib.cpp); this file gives them CudaDev:
// kernels on a stream, CUB for sort and scan. The per-thread bodies are in
// msm.cuh and ntt.cuh.
//
// Memory: device buffers come from the stream-ordered pool (cudaMallocAsync)
// whose release threshold is raised at init, so per-proof allocations are
// reused rather than returned to the driver. Pinned host memory is taken
// once (zk_host_alloc) and used as bounce buffers by zk_upload.
#if !defined(ZK_PART) || ZK_PART == 1
#include "abi.cuh" // zk_abi_version: once in the library
#endif
#include "driver.cuh"
#include "zk.cuh"
#include "zkpipe.h"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <mutex>
#include <shared_mutex>
#include <stdlib.h>
#include <string.h>
#include <unordered_map>

// ZK_PART (build.sh): the library is compiled as four translation units
// in parallel, each with one part of the C API and so only its kernels:
// 1 the device, streams, memory and the NTT; 2 the G1 MSMs, tables and
// ones; 3 the G2 MSMs; 4 the G2 tables and ones (nvcc takes ~4 minutes over
// the whole file on one core, most of it on the G2 kernels). Unset: all of it,
// one unit. The host state below is shared by the parts, hence inline (one
// definition across units); the rest of this file is per unit.
#ifndef ZK_PART
#define ZK_PART_HAS(k) 1
#else
#define ZK_PART_HAS(k) (ZK_PART == (k))
#endif

// Each stream's device, recorded by zk_stream_create: a call on a stream
// first makes that device current for its host thread (on_stream), since Go
// runs calls on whichever thread is free and CUDA's current device is per
// thread. One process may so drive several GPUs.
inline std::shared_mutex streams_mu;
inline std::unordered_map<void *, int> stream_dev;

inline NttVariant ntt_variant = NTT_REGS; // ZKPIPE_NTT at zk_init (driver.cuh)
inline int ntt_smem_max = -1;              // k_ntt_regs's shared memory a block, the least of the devices inited

// spin_sync: host threads waiting for the device spin (ZKPIPE_CUDA_SPIN=1,
// CUDA's default on a host with more cores than contexts) instead of
// sleeping until the device signals. Spinning burned about a core per GPU
// stage worker on the H200 (tail-msm and b-g2 took as much CPU time as run
// time, notes/stream.md); blocking costs a wake-up (microseconds) per wait.
inline bool spin_sync = false;

namespace {

int cuda_fail(const char *what, cudaError_t e, const char *file, int line) {
    return fail_at(e == cudaSuccess ? -1 : (int)e, file, line, "%s: %s", what, cudaGetErrorString(e));
}

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) return cuda_fail(#x, e_, __FILE__, __LINE__);                                           \
    } while (0)
#define CKL() CK(cudaGetLastError())

int on_stream(void *s) {
    int dev = -1;
    {
        std::shared_lock<std::shared_mutex> l(streams_mu);
        auto it = stream_dev.find(s);
        if (it != stream_dev.end()) dev = it->second;
    }
    if (dev < 0) return FAILF("a stream zk_stream_create did not make");
    CK(cudaSetDevice(dev));
    return 0;
}
#define ON(s) TRY(on_stream(s))

// same_device: s's device, into *dev, when the side streams (NULL or not)
// are on it too; events order streams of one device only.
int same_device(void *s, void *side0, void *side1, int *dev) {
    std::shared_lock<std::shared_mutex> l(streams_mu);
    void *all[3] = {s, side0, side1};
    for (int i = 0; i < 3; i++) {
        if (i > 0 && !all[i]) continue;
        auto it = stream_dev.find(all[i]);
        if (it == stream_dev.end()) return FAILF("a stream zk_stream_create did not make");
        if (i == 0)
            *dev = it->second;
        else if (it->second != *dev)
            return FAILF("side stream on device %d, the call's stream on %d", it->second, *dev);
    }
    return 0;
}

// Event is a CUDA event that is destroyed on every return path.
struct Event {
    cudaEvent_t e = nullptr;
    int create(unsigned flags) {
        CK(cudaEventCreateWithFlags(&e, flags));
        return 0;
    }
    ~Event() {
        if (e) cudaEventDestroy(e);
    }
    Event() = default;
    Event(const Event &) = delete;
    Event &operator=(const Event &) = delete;
};

// ─── kernels ────────────────────────────────────────────────────────────────

#include "kernels.cuh"

// ─── the device of driver.cuh ───────────────────────────────────────────────

// regs_kernel: k_ntt_regs<DIF, V, LAZY, GL> for the run-time values (DIF,
// the copy-in variant V, lazy reduction, groups across lanes): twelve
// kernels, and four more with GL for V = 2 (gl is ignored with V < 2).
// Defined in part 1 only (ZK_PART): the other parts run no NTT, and each
// definition would compile all sixteen kernels.
typedef void (*RegsKernel)(Fr *, int, int, int, int, const Fr *, const Fr *, int);
RegsKernel regs_kernel(bool dif, int v, bool lazy, bool gl);
#if ZK_PART_HAS(1)
template <bool DIF, int V> RegsKernel regs_kernel_of(bool lazy) {
    return lazy ? k_ntt_regs<DIF, V, true> : k_ntt_regs<DIF, V, false>;
}
template <bool DIF> RegsKernel regs_kernel_of(int v, bool lazy, bool gl) {
    if (v == 2 && gl) return lazy ? k_ntt_regs<DIF, 2, true, true> : k_ntt_regs<DIF, 2, false, true>;
    return v == 2 ? regs_kernel_of<DIF, 2>(lazy) : v == 1 ? regs_kernel_of<DIF, 1>(lazy) : regs_kernel_of<DIF, 0>(lazy);
}
RegsKernel regs_kernel(bool dif, int v, bool lazy, bool gl) {
    return dif ? regs_kernel_of<true>(v, lazy, gl) : regs_kernel_of<false>(v, lazy, gl);
}
#endif

// set_sync_mode sets the current device's scheduling flags by
// ZKPIPE_CUDA_SPIN and returns what CUDA said. CUDA 12 overwrites the flags
// of an initialised device; a runtime that refuses (an older one, with the
// context already made: cudaErrorSetOnActiveProcess) keeps the flags it
// has, which only costs CPU time: the caller reports it and goes on.
cudaError_t set_sync_mode() {
    const char *e = getenv("ZKPIPE_CUDA_SPIN");
    spin_sync = e && strcmp(e, "1") == 0;
    cudaError_t r = cudaSetDeviceFlags(spin_sync ? cudaDeviceScheduleAuto : cudaDeviceScheduleBlockingSync);
    if (r != cudaSuccess) cudaGetLastError(); // not sticky: clear it
    return r;
}

// event_flags: events the host waits on block as streams do (set_sync_mode).
unsigned event_flags() { return cudaEventDisableTiming | (spin_sync ? 0u : cudaEventBlockingSync); }

// CudaDev runs driver.cuh's steps as kernels on stream s.
struct CudaDev {
    cudaStream_t s;

    int alloc(void **p, size_t bytes) {
        CK(cudaMallocAsync(p, bytes ? bytes : 1, s));
        return 0;
    }
    void release(void *p) {
        if (p) cudaFreeAsync(p, s);
    }
    int to_host(void *dst, const void *src, size_t bytes) {
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
        return 0;
    }
    int sync() {
        CK(cudaStreamSynchronize(s));
        return 0;
    }
    // after: an event recorded on o's stream, waited for by this one on the
    // device. Destroying the event once the wait is enqueued is allowed:
    // CUDA keeps it until the device is done with it.
    int after(CudaDev &o) {
        if (o.s == s) return 0;
        Event ev;
        TRY(ev.create(cudaEventDisableTiming));
        CK(cudaEventRecord(ev.e, o.s));
        CK(cudaStreamWaitEvent(s, ev.e, 0));
        return 0;
    }

    // MSM
    int digits(const Fr *scalars, const u32 *idx, size_t n, int c, int nw, u32 key0, u32 sentinel, u32 *keys,
               u32 *vals) {
        k_digits<<<blocks(n), TPB, 0, s>>>(scalars, idx, n, c, nw, key0, sentinel, keys, vals);
        CKL();
        return 0;
    }
    int digits_table(const Fr *scalars, const u32 *idx, size_t n, size_t nbase, int c, int nw, u32 key0, u32 sentinel,
                     u32 *keys, u32 *vals) {
        k_digits_table<<<blocks(n), TPB, 0, s>>>(scalars, idx, n, nbase, c, nw, key0, sentinel, keys, vals);
        CKL();
        return 0;
    }
    template <class F> int precompute(const Affine<F> *bases, size_t nbase, int c, int nw, Affine<F> *table) {
        k_precompute<F><<<blocks(nbase, 128), 128, 0, s>>>(bases, nbase, c, nw, table);
        CKL();
        return 0;
    }
    int sort_pairs(void *tmp, size_t *tmp_bytes, const u32 *kin, u32 *kout, const u32 *vin, u32 *vout, size_t items,
                   int end_bit) {
        if (items > SORT_MAX_ITEMS) return FAILF("sort: %zu items, more than CUB takes", items);
        CK(cub::DeviceRadixSort::SortPairs(tmp, *tmp_bytes, kin, kout, vin, vout, (int)items, 0, end_bit, s));
        return 0;
    }
    int runs(const u32 *keys, size_t m, u32 nb, u32 *start, u32 *cnt) {
        k_runs<<<blocks(nb), TPB, 0, s>>>(keys, m, nb, start, cnt);
        CKL();
        return 0;
    }
    int tiles(const u32 *start, const u32 *cnt, u32 nb, u32 L, u32 *chunks) {
        k_tiles<<<blocks(nb), TPB, 0, s>>>(start, cnt, nb, L, chunks);
        CKL();
        return 0;
    }
    int chunks(const u32 *cnt, u32 nb, u32 L, u32 *out) {
        k_chunks<<<blocks(nb), TPB, 0, s>>>(cnt, nb, L, out);
        CKL();
        return 0;
    }
    int exclusive_sum(void *tmp, size_t *tmp_bytes, const u32 *in, u32 *out, u32 nb) {
        CK(cub::DeviceScan::ExclusiveSum(tmp, *tmp_bytes, in, out, (int)nb, s));
        return 0;
    }
    int max_of(void *tmp, size_t *tmp_bytes, const u32 *in, u32 *out, u32 nb) {
        CK(cub::DeviceReduce::Max(tmp, *tmp_bytes, in, out, (int)nb, s));
        return 0;
    }
    template <class F>
    int level0(const Affine<F> *bases, const u32 *idx, const u32 *keys, const u32 *vals, size_t m, u32 nb,
               const u32 *start, const u32 *off, u32 L, XYZZ<F> *out) {
        u32 tiles = (u32)((m + L - 1) / L);
        if constexpr (LEVEL0_PREFETCHES<F>) {
            if (msm_tuning().prefetch) {
                k_level0<F, true><<<blocks(tiles), TPB, 0, s>>>(bases, idx, keys, vals, m, nb, start, off, L, tiles, out);
                CKL();
                return 0;
            }
        }
        k_level0<F, false><<<blocks(tiles), TPB, 0, s>>>(bases, idx, keys, vals, m, nb, start, off, L, tiles, out);
        CKL();
        return 0;
    }
    template <class F>
    int aff_fwd(AffSrc<F> src, const u32 *start, const u32 *cnt, const u32 *noff, const u32 *ncnt, u32 nb,
                size_t items, u32 B, size_t lanes, Affine<F> *slots, F *T) {
        k_aff_fwd<F><<<blocks(lanes), TPB, 0, s>>>(src, start, cnt, noff, ncnt, nb, items, B, (u32)lanes, slots, T);
        CKL();
        return 0;
    }
    template <class F>
    int aff_bwd(AffSrc<F> src, const u32 *start, const u32 *cnt, const u32 *noff, size_t items, u32 B, size_t lanes,
                Affine<F> *slots, const F *Tinv) {
        k_aff_bwd<F><<<blocks(lanes), TPB, 0, s>>>(src, start, cnt, noff, items, B, (u32)lanes, slots, Tinv);
        CKL();
        return 0;
    }
    template <class F> int inv_fwd(const F *X, size_t n, u32 BI, size_t g, F *P, F *Y) {
        k_inv_fwd<F><<<blocks(g), TPB, 0, s>>>(X, n, BI, g, P, Y);
        CKL();
        return 0;
    }
    template <class F> int inv_bwd(F *X, size_t n, u32 BI, size_t g, const F *P, const F *Y) {
        k_inv_bwd<F><<<blocks(g), TPB, 0, s>>>(X, n, BI, g, P, Y);
        CKL();
        return 0;
    }
    template <class F> int inv_one(F *X) {
        k_inv_one<F><<<1, 32, 0, s>>>(X);
        CKL();
        return 0;
    }
    template <class F>
    int levelA(const Affine<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb,
               u32 L, u32 total, XYZZ<F> *out) {
        k_levelA<F><<<blocks(total), TPB, 0, s>>>(in, start, cnt, off, chunks, nb, L, total, out);
        CKL();
        return 0;
    }
    template <class F>
    int levelN(const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb, u32 L,
               u32 total, XYZZ<F> *out) {
        k_levelN<F><<<blocks(total), TPB, 0, s>>>(in, start, cnt, off, chunks, nb, L, total, out);
        CKL();
        return 0;
    }
    template <class F>
    int segment(const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, u32 nseg, XYZZ<F> *out) {
        k_segment<F><<<blocks(nseg, 128), 128, 0, s>>>(P, start, cnt, half, S, nseg, out);
        CKL();
        return 0;
    }
    template <class F> int reduce(const XYZZ<F> *in, size_t m, size_t per, XYZZ<F> *out, size_t groups) {
        k_reduce<F><<<(unsigned)groups, RED, 0, s>>>(in, m, per, out);
        CKL();
        return 0;
    }
    template <class F> int ones(const Affine<F> *bases, const u64 *bitmap, size_t n, size_t nw, XYZZ<F> *part) {
        k_ones<F><<<blocks(nw, 128), 128, 0, s>>>(bases, bitmap, n, nw, part);
        CKL();
        return 0;
    }

    // NTT
    int ntt_regs(Fr *x, int lgn, int lgm, int st, int lgG, const Fr *tw, bool difp, const Fr *scale, bool last) {
        unsigned grid = 1u << (lgn - st - lgG), threads = 1u << (lgG + st - 3);
        size_t smem = regs_smem_bytes(1u << (lgG + st));
        if ((long long)smem > ntt_smem_max)
            return FAILF("ntt: a block of 2^%d elements needs %zu bytes of shared memory, the device gives %d "
                         "(lower ZKPIPE_NTT_STAGES and ZKPIPE_NTT_BLOCK, or ZKPIPE_NTT=passes)",
                         lgG + st, smem, ntt_smem_max);
        const NttTuning &t = ntt_tuning();
        int v = t.variant;
        if (v == 2 && threads > 128) v = 1;
        RegsKernel k = regs_kernel(difp, v, t.lazy, t.lanes && v == 2 && regs_lanes_ok(st, lgG, lgm));
        k<<<grid, threads, smem, s>>>(x, lgn, lgm, st, lgG, tw, scale, last ? 1 : 0);
        CKL();
        return 0;
    }
    int ntt_pass(Fr *x, u32 n, u32 mlow, int st, u32 ngroups, const Fr *tw, bool difp) {
        u32 G = NTT_PASS_THREADS >> (st - 1);
        unsigned grid = (ngroups + G - 1) / G;
        size_t smem = (size_t)G * (1u << st) * sizeof(Fr);
        if (difp)
            k_ntt_pass<true><<<grid, NTT_PASS_THREADS, smem, s>>>(x, n, mlow, st, ngroups, tw);
        else
            k_ntt_pass<false><<<grid, NTT_PASS_THREADS, smem, s>>>(x, n, mlow, st, ngroups, tw);
        CKL();
        return 0;
    }
    int dif_stage(Fr *x, u32 n, u32 m, const Fr *tw) {
        k_dif<<<blocks(n / 2), TPB, 0, s>>>(x, n, m, tw);
        CKL();
        return 0;
    }
    int dit_stage(Fr *x, u32 n, u32 m, const Fr *tw) {
        k_dit<<<blocks(n / 2), TPB, 0, s>>>(x, n, m, tw);
        CKL();
        return 0;
    }
    int dif_tail(Fr *x, u32 n, u32 m, const Fr *tw) {
        k_dif_tail<<<n / (2 * m), m, 2 * m * sizeof(Fr), s>>>(x, n, m, tw);
        CKL();
        return 0;
    }
    int dit_head(Fr *x, u32 n, u32 top, const Fr *tw) {
        k_dit_head<<<n / (2 * top), top, 2 * top * sizeof(Fr), s>>>(x, n, top, tw);
        CKL();
        return 0;
    }
    int scale_rev(Fr *x, u32 n, int logn, const Fr *tab) {
        k_scale_rev<<<blocks(n), TPB, 0, s>>>(x, n, logn, tab);
        CKL();
        return 0;
    }
    int pointwise(Fr *a, const Fr *b, const Fr *c, u32 n, Fr zinv, bool divide) {
        k_pointwise<<<blocks(n), TPB, 0, s>>>(a, b, c, n, zinv, divide ? 1 : 0);
        CKL();
        return 0;
    }
    int powers(Fr *out, size_t count, Fr base, Fr f) {
        k_powers<<<blocks(count), TPB, 0, s>>>(out, count, base, f);
        CKL();
        return 0;
    }
};

} // namespace

// ─── C API ──────────────────────────────────────────────────────────────────

extern "C" {

#if ZK_PART_HAS(1)
int zk_init(int32_t dev, char *name, int32_t namelen, uint64_t *mem_total, char *err) {
    ErrScope es(err);
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    if (count == 0) return FAILF("no CUDA device");
    if (dev < 0 || dev >= count) return FAILF("no CUDA device %d (%d found)", dev, count);
    CK(cudaSetDevice(dev));
    TRY(ntt_variant_parse(getenv("ZKPIPE_NTT"), &ntt_variant));
    // k_ntt_regs takes up to 128 KiB of shared memory a block (4096
    // elements): more than the 48 KiB a kernel gets without asking. A
    // device with less (not the H200: 227 KiB) gets what it has, and a
    // pass that needs more fails naming the knobs (CudaDev::ntt_regs).
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    int regs_smem = (int)regs_smem_bytes(1u << 12);
    if (optin < regs_smem) regs_smem = optin;
    // five blocks of 1024 elements (33 KiB each) an SM (variant 2) need
    // more shared memory than the default carveout gives
    for (int dif = 0; dif < 2; dif++)
        for (int v = 0; v < 3; v++)
            for (int lazy = 0; lazy < 2; lazy++)
                for (int gl = 0; gl < (v == 2 ? 2 : 1); gl++) {
                    RegsKernel k = regs_kernel(dif, v, lazy, gl);
                    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, regs_smem));
                    if (v == 2) CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
                }
    if (ntt_smem_max < 0 || regs_smem < ntt_smem_max) ntt_smem_max = regs_smem;
    cudaError_t sync_mode = set_sync_mode();
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    snprintf(name, (size_t)namelen, "%s (sm_%d%d, %d SMs, %s, ntt %s)", p.name, p.major, p.minor,
             p.multiProcessorCount,
             sync_mode != cudaSuccess ? "CUDA's default waits: blocking sync refused"
             : spin_sync              ? "spin-wait"
                                      : "blocking sync",
             ntt_variant_name(ntt_variant));
    *mem_total = p.totalGlobalMem;
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t thr = UINT64_MAX;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    // ZKPIPE_CUDA_POOL_DEPS=0: a stream's allocation never reuses memory
    // another stream freed and has not yet reached (CUDA's default may, by
    // making the allocating stream wait for the other: concurrent compute
    // streams then serialise on their scratch). To be measured; default kept.
    const char *deps = getenv("ZKPIPE_CUDA_POOL_DEPS");
    if (deps && strcmp(deps, "0") == 0) {
        int off = 0;
        CK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &off));
    }
    return 0;
}

int zk_device_count(int32_t *n, char *err) {
    ErrScope es(err);
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    *n = count;
    return 0;
}

int zk_mem_info(int32_t dev, uint64_t *free_bytes, uint64_t *total, char *err) {
    ErrScope es(err);
    CK(cudaSetDevice(dev));
    size_t f = 0, t = 0;
    CK(cudaMemGetInfo(&f, &t));
    // The pool keeps freed memory (release threshold raised at init): what
    // it holds beyond what is in use is free for the next allocation too.
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t reserved = 0, used = 0;
    CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    *free_bytes = f + (reserved > used ? reserved - used : 0);
    *total = t;
    return 0;
}

int zk_host_alloc(void **p, uint64_t bytes, char *err) {
    ErrScope es(err);
    CK(cudaHostAlloc(p, bytes, cudaHostAllocPortable));
    memset(*p, 0, bytes); // touch every page once, at start-up
    return 0;
}
int zk_host_free(void *p, char *err) {
    ErrScope es(err);
    CK(cudaFreeHost(p));
    return 0;
}

int zk_stream_create(int32_t dev, void **s, char *err) {
    ErrScope es(err);
    CK(cudaSetDevice(dev));
    CK(cudaStreamCreateWithFlags((cudaStream_t *)s, cudaStreamNonBlocking));
    std::unique_lock<std::shared_mutex> l(streams_mu);
    stream_dev[*s] = dev;
    return 0;
}
int zk_stream_destroy(void *s, char *err) {
    ErrScope es(err);
    ON(s);
    // Synchronise, forget and destroy whatever the synchronisation says: the
    // caller forgets the handle, and CUDA may hand its address to the next
    // stream created, whose entry must not be erased by this one.
    cudaError_t sync = cudaStreamSynchronize((cudaStream_t)s);
    {
        std::unique_lock<std::shared_mutex> l(streams_mu);
        stream_dev.erase(s);
    }
    cudaError_t destroy = cudaStreamDestroy((cudaStream_t)s);
    if (sync != cudaSuccess) return cuda_fail("cudaStreamSynchronize", sync, __FILE__, __LINE__);
    if (destroy != cudaSuccess) return cuda_fail("cudaStreamDestroy", destroy, __FILE__, __LINE__);
    return 0;
}
int zk_stream_sync(void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CK(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

int zk_dev_alloc(void **p, uint64_t bytes, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CK(cudaMallocAsync(p, bytes ? bytes : 1, (cudaStream_t)s));
    return 0;
}
int zk_dev_free(void *p, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    if (p) CK(cudaFreeAsync(p, (cudaStream_t)s));
    return 0;
}
int zk_memset(void *p, uint64_t bytes, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    if (bytes) CK(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)s));
    return 0;
}

// zk_upload: the CPU fills one pinned buffer while the other is copied; the
// stream is synchronised before returning, whatever happened.
int zk_upload(void *dst, const void *src, uint64_t bytes, void *pin0, void *pin1, uint64_t pin_bytes, void *sv,
              char *err) {
    ErrScope es(err);
    ON(sv);
    cudaStream_t s = (cudaStream_t)sv;
    if (bytes == 0) return 0;
    Event ev[2];
    TRY(ev[0].create(event_flags()));
    TRY(ev[1].create(event_flags()));
    void *pin[2] = {pin0, pin1};
    int rc = 0;
    size_t k = 0;
    for (size_t off = 0; off < bytes; off += pin_bytes, k++) {
        size_t len = bytes - off < pin_bytes ? bytes - off : pin_bytes;
        int b = (int)(k & 1);
        cudaError_t e = cudaSuccess;
        if (k >= 2) e = cudaEventSynchronize(ev[b].e);
        if (e == cudaSuccess) {
            memcpy(pin[b], (const char *)src + off, len);
            e = cudaMemcpyAsync((char *)dst + off, pin[b], len, cudaMemcpyHostToDevice, s);
        }
        if (e == cudaSuccess) e = cudaEventRecord(ev[b].e, s);
        if (e != cudaSuccess) {
            rc = cuda_fail("upload", e, __FILE__, __LINE__);
            break;
        }
    }
    cudaError_t e = cudaStreamSynchronize(s);
    if (!rc && e != cudaSuccess) rc = cuda_fail("upload sync", e, __FILE__, __LINE__);
    return rc;
}

int zk_h2d_async(void *dst, const void *src, uint64_t bytes, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    if (!bytes) return 0;
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)s));
    return 0;
}

int zk_download(void *dst, const void *src, uint64_t bytes, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    if (!bytes) return 0;
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)s));
    CK(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

int zk_domain_tables(void *tw, void *twinv, void *gn, void *ginvn, int32_t logn, const uint64_t *consts, void *s,
                     char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return domain_tables_run(d, (Fr *)tw, (Fr *)twinv, (Fr *)gn, (Fr *)ginvn, logn, (const Fr *)consts);
}

int zk_compute_h(void *a, void *b, void *c, int32_t logn, const void *tw, const void *twinv, const void *gn,
                 const void *ginvn, int32_t conv, const uint64_t *zinv, void *s, void *side0, void *side1,
                 char *err) {
    ErrScope es(err);
    int dev = -1;
    TRY(same_device(s, side0, side1, &dev));
    CK(cudaSetDevice(dev));
    CudaDev d{(cudaStream_t)s}, d0{(cudaStream_t)side0}, d1{(cudaStream_t)side1};
    return compute_h_run(d, side0 ? &d0 : nullptr, side1 ? &d1 : nullptr, (Fr *)a, (Fr *)b, (Fr *)c, logn,
                         (const Fr *)tw, (const Fr *)twinv, (const Fr *)gn, (const Fr *)ginvn, conv,
                         *(const Fr *)zinv, ntt_variant);
}

// zk_bench_ntt times reps forward NTTs (DIT) of x in place; *ms is the
// mean per NTT, from CUDA events.
int zk_bench_ntt(void *x, int32_t logn, const void *tw, int32_t reps, float *ms, void *sv, char *err) {
    ErrScope es(err);
    ON(sv);
    cudaStream_t s = (cudaStream_t)sv;
    CudaDev d{s};
    if (reps < 1) return FAILF("bench ntt: %d repetitions", reps);
    TRY(dit(d, (Fr *)x, logn, (const Fr *)tw, ntt_variant)); // warm-up
    Event e0, e1;
    TRY(e0.create(cudaEventDefault));
    TRY(e1.create(cudaEventDefault));
    CK(cudaEventRecord(e0.e, s));
    for (int i = 0; i < reps; i++) TRY(dit(d, (Fr *)x, logn, (const Fr *)tw, ntt_variant));
    CK(cudaEventRecord(e1.e, s));
    CK(cudaEventSynchronize(e1.e));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0.e, e1.e));
    *ms = t / (float)reps;
    return 0;
}
#endif

#if ZK_PART_HAS(2)
int zk_msm_g1(const void *bases, const void *scalars, const uint32_t *idx, uint64_t n, void *out, int32_t *c,
              int32_t *nw, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_run<Fp>(d, (const Affine<Fp> *)bases, (const Fr *)scalars, idx, n, (XYZZ<Fp> *)out, c, nw);
}
#endif
#if ZK_PART_HAS(3)
int zk_msm_g2(const void *bases, const void *scalars, const uint32_t *idx, uint64_t n, void *out, int32_t *c,
              int32_t *nw, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_run<Fp2>(d, (const Affine<Fp2> *)bases, (const Fr *)scalars, idx, n, (XYZZ<Fp2> *)out, c, nw);
}
#endif
#if ZK_PART_HAS(1)
int zk_msm_scratch_bytes(uint64_t n, int32_t g2, uint64_t *out, char *err) {
    ErrScope es(err);
    *out = g2 ? msm_scratch_bytes<Fp2>(n) : msm_scratch_bytes<Fp>(n);
    return 0;
}
int zk_msm_table_layout(uint64_t nbase, int32_t *c, int32_t *nw, char *err) {
    ErrScope es(err);
    int ci = 0, nwi = 0;
    TRY(msm_table_layout(nbase, &ci, &nwi));
    *c = ci;
    *nw = nwi;
    return 0;
}
#endif
#if ZK_PART_HAS(2)
int zk_precompute_g1(const void *bases, uint64_t nbase, void *table, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_precompute_raw<Fp>(d, bases, nbase, table);
}
#endif
#if ZK_PART_HAS(4)
int zk_precompute_g2(const void *bases, uint64_t nbase, void *table, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_precompute_raw<Fp2>(d, bases, nbase, table);
}
#endif
#if ZK_PART_HAS(2)
int zk_msm_table_g1(const void *table, uint64_t nbase, const void *scalars, const uint32_t *idx, uint64_t n,
                    void *out, int32_t *c, int32_t *nw, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_table_raw<Fp>(d, table, nbase, scalars, idx, n, out, c, nw);
}
#endif
#if ZK_PART_HAS(3)
int zk_msm_table_g2(const void *table, uint64_t nbase, const void *scalars, const uint32_t *idx, uint64_t n,
                    void *out, int32_t *c, int32_t *nw, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_table_raw<Fp2>(d, table, nbase, scalars, idx, n, out, c, nw);
}
#endif
#if ZK_PART_HAS(2)
int zk_msm_batch_g1(const void *bases, const void *const *scalars, const uint32_t *const *idx, const uint64_t *n,
                    uint32_t k, void *out, int32_t *c, int32_t *nw, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_batch_raw<Fp>(d, bases, scalars, idx, n, k, out, c, nw);
}
int zk_msm_table_batch_g1(const void *table, uint64_t nbase, const void *const *scalars, const uint32_t *const *idx,
                          const uint64_t *n, uint32_t k, void *out, int32_t *c, int32_t *nw, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return msm_table_batch_raw<Fp>(d, table, nbase, scalars, idx, n, k, out, c, nw);
}
int zk_ones_g1(const void *bases, const uint64_t *bitmap, uint64_t n, void *out, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return ones_run<Fp>(d, (const Affine<Fp> *)bases, bitmap, n, (XYZZ<Fp> *)out);
}
#endif
#if ZK_PART_HAS(4)
int zk_ones_g2(const void *bases, const uint64_t *bitmap, uint64_t n, void *out, void *s, char *err) {
    ErrScope es(err);
    ON(s);
    CudaDev d{(cudaStream_t)s};
    return ones_run<Fp2>(d, (const Affine<Fp2> *)bases, bitmap, n, (XYZZ<Fp2> *)out);
}
#endif

} // extern "C"
