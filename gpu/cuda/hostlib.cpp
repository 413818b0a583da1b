// hostlib.cpp — a CPU stand-in for libzkpipe_cuda.so with the same C ABI
// (zkpipe.h), so that gpu/ (purego loading, the ABI handshake, layouts,
// window combination, lifecycle, error and cleanup paths) is tested on a
// machine with no GPU:
//
//	g++ -O2 -std=c++17 -shared -fPIC hostlib.cpp -o /tmp/libzkpipe_host.so
//	ZKPIPE_CUDA_LIB=/tmp/libzkpipe_host.so go test -run CUDA ./gpu
//
// The drivers are driver.cuh's and the kernels kernels.cuh's, the very code
// zkpipe.cu runs on the GPU, launched with the same grids: HostDev runs each
// launch on the CPU, every CUDA thread a fiber (cuda_host.h), so that
// barriers and shared memory behave as on the GPU. What stays the GPU's
// alone: CUB's radix sort and scan (std::stable_sort and a serial loop here),
// zk_upload's events and pinned double-buffering (two memcpys here), and the
// memory pool ("device" memory is host memory with a byte count). Slow: for
// small sizes only.
//
// Test controls, not part of zkpipe.h (the Go tests look them up):
//
//	zk_host_fail(what, nth)  the nth next call (1 = the next) of kind what
//	                         fails: "cudaMalloc" (every device allocation),
//	                         "kernel" (every kernel launch), "copy" (uploads
//	                         and downloads); nth 0 clears it
//	zk_host_set_memory(total) the device's memory for zk_mem_info and the
//	                         limit of allocations (0: unlimited, reported as 1 TiB)
//	zk_host_allocated()      device bytes allocated now
//	zk_host_peak(reset)      the most allocated at once (since the last reset;
//	                         reset ≠ 0 starts a new period at the bytes held now)
//	zk_host_live()           device allocations live now
//	zk_host_pinned(live)     pinned host allocations (zk_host_alloc) made
//	                         since the library loaded; live ≠ 0: the
//	                         bytes held now instead
//	zk_host_set_delay(us)    a stream's queued work takes us to run (device
//	                         time, its memory held), so that calls on several
//	                         streams overlap visibly
//	zk_host_calls_peak(reset) the most streams in kernel calls (MSM, ones,
//	                         H with its side streams) at once, since the last
//	                         reset; a second call on a stream already in one
//	                         fails instead
//	zk_host_fail_on(dev, what, nth)  as zk_host_fail, on device dev alone;
//	                         nth < 0: every call of that kind from the
//	                         |nth|th on fails (a device that is lost)
//	zk_host_set_devices(n)   the stand-in is n devices from now on (1 to
//	                         16; the default is ZK_HOST_DEVICES, 1 unless
//	                         built with -DZK_HOST_DEVICES=n): each has its
//	                         own streams and failures; memory is counted for
//	                         all together
//	zk_host_context_config(ctx, out)  the zk_config a context was made with,
//	                         as zk_init checked it (so tests see the config
//	                         reach the library)
//
// Streams: a call's work on a stream is queued and runs only when something
// waits for it (HostDev), so work on two streams with no event between them
// runs in the worst order, and a missing wait gives wrong results.
#define ZK_FIXED_BASE_CHUNK 64 // zk_fixed_base's chunks: several at a test's sizes (driver.cuh)
#include "cuda_host.h" // before the kernels: CUDA's execution model on the CPU
#include "abi.cuh" // zk_abi_version, zk_default_config
#include "driver.cuh"
#include "zk.cuh"
#include "zkpipe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace {

#include "kernels.cuh" // the GPU's kernels, run by cuda_host::launch

// ─── failures on request ─────────────────────────────────────────────────────

enum Kind { MALLOC, KERNEL, COPY, KINDS };
const char *kind_name[KINDS] = {"cudaMalloc", "kernel", "copy"};
const int MAX_DEVS = 16;
std::atomic<long> fail_at_call[MAX_DEVS][KINDS]; // fail when the countdown reaches 1; 0: never
thread_local int cur_dev = 0;                    // the device of this thread's current call

#ifndef ZK_HOST_DEVICES
#define ZK_HOST_DEVICES 1
#endif
static_assert(ZK_HOST_DEVICES >= 1 && ZK_HOST_DEVICES <= MAX_DEVS, "ZK_HOST_DEVICES: 1 to 16");
std::atomic<int> n_devices{ZK_HOST_DEVICES}; // zk_host_set_devices

// devices is how many devices the stand-in pretends to be.
int devices() { return n_devices.load(); }

// A context is zk_init's: a device and its config, checked.
struct HostContext {
    int dev;
    ContextConfig cfg;
    zk_config raw; // as given (zk_host_context_config)
};

// A stream is its context's, and the kernel calls on it now.
struct HostStream {
    const HostContext *cx;
    int dev;
    std::atomic<int> kernel_calls{0};
};

// on_stream makes s's device the current call's (for injected failures).
void on_stream(void *s) { cur_dev = s ? ((HostStream *)s)->dev : 0; }

// ─── streams at once ─────────────────────────────────────────────────────────

// The stand-in runs a call's work on the calling thread, so calls on
// different streams from different threads overlap as the GPU's streams do
// (their launches take turns: cuda_host::launch). What the Go side must get
// right, and the tests check through these counters: a compute stream
// serves one operation at a time (KernelCall refuses a second), and with k
// compute streams up to k streams are in kernel calls at once (peak; an H
// computation holds its side streams too). delay_us is the device time a
// stream's queued work takes (HostDev::flush sleeps it), so that calls
// overlap long enough to be seen.
std::atomic<int> calls_now{0}, calls_peak{0};
std::atomic<uint64_t> delay_us{0};

// KernelCall marks stream s (none when NULL) busy in one kernel entry point
// (MSM, ones, H, NTT bench) for its length; rc is 0, or a failure when
// another call holds the stream.
struct KernelCall {
    HostStream *s;
    int rc = 0;
    explicit KernelCall(void *sv) : s((HostStream *)sv) {
        if (!s) return;
        if (s->kernel_calls.fetch_add(1) > 0)
            rc = FAILF("stream %p: a second kernel call while one runs (a compute stream serves one operation)", sv);
        int now = ++calls_now;
        for (int p = calls_peak.load(); now > p && !calls_peak.compare_exchange_weak(p, now);) {
        }
    }
    ~KernelCall() {
        if (!s) return;
        calls_now--;
        s->kernel_calls--;
    }
    KernelCall(const KernelCall &) = delete;
    KernelCall &operator=(const KernelCall &) = delete;
};
#define KERNEL_CALL(sv)                                                                                                \
    on_stream(sv);                                                                                                     \
    KernelCall kc_(sv);                                                                                                \
    TRY(kc_.rc)

std::atomic<long> lost_from[MAX_DEVS][KINDS]; // countdown to a device lost for good; -1: lost

// injected reports whether this call of kind k is the one told to fail.
int injected(Kind k) {
    std::atomic<long> &lf = lost_from[cur_dev][k];
    for (long v = lf.load(); v != 0;) {
        if (v < 0 || v == 1) {
            lf.store(-1);
            // 719, cudaErrorLaunchFailure: sticky, as a lost GPU's errors are
            return fail_at(719, __FILE__, __LINE__, "%s: device %d lost (zk_host_fail_on)", kind_name[k], cur_dev);
        }
        if (lf.compare_exchange_weak(v, v - 1)) break;
    }
    std::atomic<long> &at = fail_at_call[cur_dev][k];
    long v = at.load();
    while (v > 0) {
        if (at.compare_exchange_weak(v, v - 1)) {
            if (v == 1) return fail_at(2, __FILE__, __LINE__, "%s: injected failure (zk_host_fail)", kind_name[k]);
            return 0;
        }
    }
    return 0;
}

// ─── "device" memory: host memory with a size header, counted ───────────────

const size_t HDR = 64; // keeps the user pointer 64-byte aligned
std::atomic<uint64_t> dev_total{0}, dev_used{0}, dev_peak{0};
std::atomic<long> dev_live{0};

// dalloc takes bytes of "device" memory; *credit (when given) is what the
// stream freed and the device has not reached yet, which the pool lends to
// the same stream's next allocations before taking more.
int dalloc(void **p, size_t bytes, uint64_t *credit = nullptr) {
    TRY(injected(MALLOC));
    if (!bytes) bytes = 1;
    uint64_t reuse = credit ? std::min<uint64_t>(*credit, bytes) : 0, more = bytes - reuse;
    uint64_t total = dev_total.load();
    if (total && dev_used.load() + more > total)
        return fail_at(2, __FILE__, __LINE__, "cudaMalloc: out of memory (%zu bytes, %llu of %llu in use)", bytes,
                       (unsigned long long)dev_used.load(), (unsigned long long)total);
    char *q = (char *)aligned_alloc(HDR, (HDR + bytes + HDR - 1) / HDR * HDR);
    if (!q) return fail_at(2, __FILE__, __LINE__, "cudaMalloc: out of host memory (%zu bytes)", bytes);
    memcpy(q, &bytes, sizeof bytes);
    memset(q + HDR, 0xa5, bytes); // poison: unwritten output shows
    if (credit) *credit -= reuse;
    uint64_t now = dev_used += more;
    for (uint64_t p = dev_peak.load(); now > p && !dev_peak.compare_exchange_weak(p, now);) {
    }
    dev_live++;
    *p = q + HDR;
    return 0;
}

// dfree frees p now (an allocation the device no longer uses).
void dfree(void *p) {
    if (!p) return;
    char *q = (char *)p - HDR;
    size_t bytes;
    memcpy(&bytes, q, sizeof bytes);
    dev_used -= bytes;
    dev_live--;
    free(q);
}

// ─── the device of driver.cuh ───────────────────────────────────────────────

// HostDev is one stream of one call, and runs its work as a GPU stream
// would be allowed to: in issue order, but not before something waits for
// it. Launches, sorts, scans, zero-fills and frees are queued; the queue
// runs at sync() and to_host() (the host waits for the stream), when another
// stream waits for this one (other.after(*this)), and at the end of the
// call (the GPU gets to it eventually: after the call's other streams'
// work, so a missing wait shows as wrong results). Running the queue takes
// the device time (zk_host_set_delay) first, with the queue's memory held.
// Allocations happen at once; a free is the stream's to reuse at once (the
// pool lends the bytes to its next allocations) and everyone's when the
// queue reaches it, as with CUDA's stream-ordered pool. Failures on
// request are decided when work is issued, as a launch error is.
struct HostDev {
    std::vector<std::function<void()>> q;
    uint64_t credit = 0; // bytes freed on this stream, not reached yet

    HostDev() = default;
    HostDev(const HostDev &) = delete;
    HostDev &operator=(const HostDev &) = delete;
    ~HostDev() { flush(); }

    void issue(std::function<void()> f) { q.push_back(std::move(f)); }
    void flush() {
        if (q.empty()) return;
        if (uint64_t us = delay_us.load()) std::this_thread::sleep_for(std::chrono::microseconds(us));
        for (size_t i = 0; i < q.size(); i++) q[i]();
        q.clear();
        dev_used -= credit;
        credit = 0;
    }

    int alloc(void **p, size_t bytes) { return dalloc(p, bytes, &credit); }
    void release(void *p) {
        if (!p) return;
        char *raw = (char *)p - HDR;
        size_t bytes;
        memcpy(&bytes, raw, sizeof bytes);
        credit += bytes;
        dev_live--;
        issue([raw] { free(raw); });
    }
    int to_host(void *dst, const void *src, size_t bytes) {
        flush();
        TRY(injected(COPY));
        memcpy(dst, src, bytes);
        return 0;
    }
    int sync() {
        flush();
        return 0;
    }
    // to_host_early: dst is written once the work queued so far has run,
    // by copied() at the latest (the GPU's copy waits for its event alone).
    int to_host_early(void *dst, const void *src, size_t bytes) {
        TRY(injected(COPY));
        issue([=] { memcpy(dst, src, bytes); });
        return 0;
    }
    int copied() {
        flush();
        return 0;
    }
    int mark() { return 0; } // the stand-in's waits are its own runs
    int to_dev(void *dst, const void *src, size_t bytes) {
        TRY(injected(COPY));
        issue([=] { memcpy(dst, src, bytes); });
        return 0;
    }
    // after: this stream's later work waits for o's so far: o's queue runs
    // now, before anything this one issues next.
    int after(HostDev &o) {
        o.flush();
        return 0;
    }

    // MSM: the launches of CudaDev (zkpipe.cu), same grids and blocks.
    template <class S>
    int digits(const S *scalars, const u32 *idx, size_t n, int c, int nw, u32 key0, u32 sentinel, u32 *keys,
               u32 *vals) {
        TRY(injected(KERNEL));
        issue([=] {
            cuda_host::launch(blocks(n), TPB, 0, [=] { k_digits<S>(scalars, idx, n, c, nw, key0, sentinel, keys, vals); });
        });
        return 0;
    }
    template <class S>
    int digits_table(const S *scalars, const u32 *idx, size_t n, size_t nbase, int c, int nw, u32 key0, u32 sentinel,
                     u32 *keys, u32 *vals) {
        TRY(injected(KERNEL));
        issue([=] {
            cuda_host::launch(blocks(n), TPB, 0,
                              [=] { k_digits_table<S>(scalars, idx, n, nbase, c, nw, key0, sentinel, keys, vals); });
        });
        return 0;
    }
    template <class F> int precompute(const Affine<F> *bases, size_t nbase, int c, int nw, Affine<F> *table) {
        TRY(injected(KERNEL));
        cuda_host::launch(blocks(nbase, 128), 128, 0, [&] { k_precompute<F>(bases, nbase, c, nw, table); });
        return 0;
    }
    int sort_pairs(void *tmp, size_t *tmp_bytes, const u32 *kin, u32 *kout, const u32 *vin, u32 *vout, size_t items,
                   int end_bit) {
        if (items > SORT_MAX_ITEMS) return FAILF("sort: %zu items, more than CUB takes", items);
        if (!tmp) {
            *tmp_bytes = 1;
            return 0;
        }
        TRY(injected(KERNEL));
        issue([=] {
            // CUB's radix sort is stable, as std::stable_sort is.
            u32 mask = end_bit >= 32 ? 0xffffffffu : (1u << end_bit) - 1;
            std::vector<size_t> ord(items);
            for (size_t i = 0; i < items; i++) ord[i] = i;
            std::stable_sort(ord.begin(), ord.end(),
                             [&](size_t a, size_t b) { return (kin[a] & mask) < (kin[b] & mask); });
            for (size_t i = 0; i < items; i++) kout[i] = kin[ord[i]], vout[i] = vin[ord[i]];
        });
        return 0;
    }
    int runs(const u32 *keys, size_t m, u32 nb, u32 *start, u32 *cnt) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(nb), TPB, 0, [=] { k_runs(keys, m, nb, start, cnt); }); });
        return 0;
    }
    int tiles(const u32 *start, const u32 *cnt, u32 nb, u32 L, u32 *chunks) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(nb), TPB, 0, [=] { k_tiles(start, cnt, nb, L, chunks); }); });
        return 0;
    }
    int chunks(const u32 *cnt, u32 nb, u32 L, u32 *out) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(nb), TPB, 0, [=] { k_chunks(cnt, nb, L, out); }); });
        return 0;
    }
    int exclusive_sum(void *tmp, size_t *tmp_bytes, const u32 *in, u32 *out, u32 nb) {
        if (!tmp) {
            *tmp_bytes = 1;
            return 0;
        }
        TRY(injected(KERNEL));
        issue([=] {
            u32 acc = 0; // CUB's scan
            for (u32 b = 0; b < nb; b++) out[b] = acc, acc += in[b];
        });
        return 0;
    }
    int max_of(void *tmp, size_t *tmp_bytes, const u32 *in, u32 *out, u32 nb) {
        if (!tmp) {
            *tmp_bytes = 1;
            return 0;
        }
        TRY(injected(KERNEL));
        issue([=] {
            u32 m = 0; // CUB's reduction
            for (u32 b = 0; b < nb; b++) m = in[b] > m ? in[b] : m;
            *out = m;
        });
        return 0;
    }
    // level0_slots: a pretend device of 32 level0 threads, so that the
    // stand-in's BLS12-381 G1 MSMs of proofs (Level0Widens) run level 0 in
    // tiles that level0_chunk widened, as a GPU's of 2^22 and more do.
    template <class F> size_t level0_slots() const { return 32; }
    template <class F>
    int level0(const Affine<F> *bases, const u32 *idx, const u32 *keys, const u32 *vals, size_t m, u32 nb,
               const u32 *start, const u32 *off, u32 L, XYZZ<F> *out) {
        TRY(injected(KERNEL));
        u32 tiles = (u32)((m + L - 1) / L);
        issue([=] {
            cuda_host::launch(blocks(tiles), TPB, 0, [=] {
                k_level0<F, LEVEL0_PREFETCHES<F>>(bases, idx, keys, vals, m, nb, start, off, L, tiles, out);
            });
        });
        return 0;
    }
    template <class F>
    int levelN(const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb, u32 L,
               u32 total, XYZZ<F> *out) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(total), TPB, 0, [=] { k_levelN<F>(in, start, cnt, off, chunks, nb, L, total, out); }); });
        return 0;
    }
    template <class F>
    int segment(const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, u32 nseg, XYZZ<F> *acc,
                XYZZ<F> *run) {
        TRY(injected(KERNEL));
        issue([=] {
            cuda_host::launch(blocks(nseg, 128), 128, 0, [=] { k_segment<F>(P, start, cnt, half, S, nseg, acc, run); });
        });
        return 0;
    }
    template <class F>
    int bitsum(const XYZZ<F> *acc, const XYZZ<F> *run, u32 spw, u32 K, u32 parts, u32 per, XYZZ<F> *out,
               size_t groups) {
        TRY(injected(KERNEL));
        issue([=] {
            cuda_host::launch((unsigned)groups, RED, 0, [=] { k_bitsum<F>(acc, run, spw, K, parts, per, out); }, true);
        });
        return 0;
    }
    template <class F> int weigh(const XYZZ<F> *sums, u32 n, u32 K, int lgS, XYZZ<F> *out) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(n), TPB, 0, [=] { k_weigh<F>(sums, n, K, lgS, out); }); });
        return 0;
    }
    template <class F> int reduce(const XYZZ<F> *in, size_t m, size_t per, XYZZ<F> *out, size_t groups) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch((unsigned)groups, RED, 0, [=] { k_reduce<F>(in, m, per, out); }, true); });
        return 0;
    }
    template <class F> int ones(const Affine<F> *bases, const u64 *bitmap, size_t n, size_t nw, XYZZ<F> *part) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(nw, 128), 128, 0, [=] { k_ones<F>(bases, bitmap, n, nw, part); }); });
        return 0;
    }

    // fixed-base products: zkpipe.cu's launches
    template <class F> int fb_powers(const Affine<F> *base, int c, int nw, XYZZ<F> *pw) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(1, 1, 0, [=] { k_fb_powers<F>(base, c, nw, pw); }); });
        return 0;
    }
    template <class F> int fb_table(const XYZZ<F> *pw, int c, size_t entries, Affine<F> *table) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(entries, 128), 128, 0, [=] { k_fb_table<F>(pw, c, entries, table); }); });
        return 0;
    }
    template <class F>
    int fb_mul(const ScalarOf<F> *scalars, size_t m, const Affine<F> *table, int c, int nw, XYZZ<F> *out) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(m, 128), 128, 0, [=] { k_fb_mul<F>(scalars, m, table, c, nw, out); }); });
        return 0;
    }
    template <class F> int fb_affine(const XYZZ<F> *in, size_t m, size_t g, Affine<F> *out) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(g, 128), 128, 0, [=] { k_fb_affine<F>(in, m, g, out); }); });
        return 0;
    }

    // NTT
    template <class S>
    int ntt_regs(S *x, int lgn, int lgm, int st, int lgG, const S *tw, bool difp, const S *scale, bool last) {
        TRY(injected(KERNEL));
        unsigned grid = 1u << (lgn - st - lgG), threads = 1u << (lgG + st - 3);
        size_t smem = regs_smem_bytes(1u << (lgG + st));
        int canon = last ? 1 : 0;
        issue([=] {
            cuda_host::launch(grid, threads, smem, [=] {
                if (difp)
                    k_ntt_regs<S, true>(x, lgn, lgm, st, lgG, tw, scale, canon);
                else
                    k_ntt_regs<S, false>(x, lgn, lgm, st, lgG, tw, scale, canon);
            }, true);
        });
        return 0;
    }
    template <class S> int ntt_pass(S *x, u32 n, u32 mlow, int st, u32 ngroups, const S *tw, bool difp) {
        TRY(injected(KERNEL));
        u32 G = NTT_PASS_THREADS >> (st - 1);
        unsigned grid = (ngroups + G - 1) / G;
        size_t smem = (size_t)G * (1u << st) * sizeof(S);
        if (difp)
            issue([=] { cuda_host::launch(grid, NTT_PASS_THREADS, smem, [=] { k_ntt_pass<S, true>(x, n, mlow, st, ngroups, tw); }, true); });
        else
            issue([=] { cuda_host::launch(grid, NTT_PASS_THREADS, smem, [=] { k_ntt_pass<S, false>(x, n, mlow, st, ngroups, tw); }, true); });
        return 0;
    }
    template <class S> int scale_rev(S *x, u32 n, int logn, const S *tab) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(n), TPB, 0, [=] { k_scale_rev<S>(x, n, logn, tab); }); });
        return 0;
    }
    template <class S> int pointwise(S *a, const S *b, const S *c, u32 n, S zinv, bool divide) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(n), TPB, 0, [=] { k_pointwise<S>(a, b, c, n, zinv, divide ? 1 : 0); }); });
        return 0;
    }
    template <class S> int powers(S *out, size_t count, S base, S f) {
        TRY(injected(KERNEL));
        issue([=] { cuda_host::launch(blocks(count), TPB, 0, [=] { k_powers<S>(out, count, base, f); }); });
        return 0;
    }
};

} // namespace

// pinned allocations, counted for zk_host_pinned (the size ahead of each block)
static std::atomic<uint64_t> pinned_allocs{0}, pinned_bytes{0};

extern "C" {

// ─── test controls ───────────────────────────────────────────────────────────

int zk_host_fail_on(int dev, const char *what, long nth);
int zk_host_fail(const char *what, long nth) { return zk_host_fail_on(0, what, nth); }
int zk_host_fail_on(int dev, const char *what, long nth) {
    if (dev < 0 || dev >= MAX_DEVS) return -1;
    for (int k = 0; k < KINDS; k++)
        if (strcmp(what, kind_name[k]) == 0) {
            fail_at_call[dev][k].store(nth > 0 ? nth : 0);
            lost_from[dev][k].store(nth < 0 ? -nth : 0);
            return 0;
        }
    return -1;
}
void zk_host_set_memory(uint64_t total) { dev_total.store(total); }
uint64_t zk_host_allocated(void) { return dev_used.load(); }
uint64_t zk_host_peak(int reset) { return reset ? dev_peak.exchange(dev_used.load()) : dev_peak.load(); }
long zk_host_live(void) { return dev_live.load(); }
uint64_t zk_host_pinned(int live) { return live ? pinned_bytes.load() : pinned_allocs.load(); }
void zk_host_set_delay(uint64_t us) { delay_us.store(us); }
int zk_host_set_devices(int n) {
    if (n < 1 || n > MAX_DEVS) return -1;
    n_devices.store(n);
    return 0;
}
int zk_host_context_config(void *ctx, zk_config *out) {
    if (!ctx || !out) return -1;
    *out = ((const HostContext *)ctx)->raw;
    return 0;
}
int zk_host_calls_peak(int reset) { return reset ? calls_peak.exchange(calls_now.load()) : calls_peak.load(); }


} // extern "C"

// ─── zkpipe.h: entries.cuh's list, over HostDev ─────────────────────────────

// the stand-in is every part in one unit (part 0 is none: curves.h)
#define ZK_PART_KEEP_(...) __VA_ARGS__
#define ZK_PART_0(...)
#define ZK_PART_1 ZK_PART_KEEP_
#define ZK_PART_2 ZK_PART_KEEP_
#define ZK_PART_3 ZK_PART_KEEP_
#define ZK_PART_4 ZK_PART_KEEP_
#define ZK_PART_5 ZK_PART_KEEP_
#define ZK_PART_6 ZK_PART_KEEP_
#define ZK_PART_7 ZK_PART_KEEP_
#define ZK_PART_8 ZK_PART_KEEP_
#define ZK_PART_9 ZK_PART_KEEP_
#define ZK_PART_10 ZK_PART_KEEP_
#define ZK_PART_11 ZK_PART_KEEP_
#define ZK_PART_12 ZK_PART_KEEP_
#define ZK_PART_13 ZK_PART_KEEP_
#define ZK_PART_14 ZK_PART_KEEP_
#define ZK_PART_15 ZK_PART_KEEP_
#define ZK_PART_16 ZK_PART_KEEP_

// ZK_OPEN: the call's stream is its device's (for injected failures); a
// kernel call marks it busy (KernelCall). s may be NULL in the stand-in
// (device 0, the default config).
const ContextConfig default_context_config{};
#define ZK_OPEN(sv, busy)                                                                                              \
    on_stream(sv);                                                                                                     \
    KernelCall kc_((busy) ? (sv) : nullptr);                                                                           \
    TRY(kc_.rc);                                                                                                       \
    HostDev d;                                                                                                         \
    const MsmTuning &t = (sv) ? ((HostStream *)(sv))->cx->cfg.msm : default_context_config.msm;                        \
    (void)t
#define ZK_OPEN_CTX(ctx)                                                                                               \
    if (!(ctx)) return FAILF("no context: zk_init makes one");                                                         \
    const MsmTuning &t = ((const HostContext *)(ctx))->cfg.msm

namespace {

int dev_zk_init(int32_t dev, const zk_config *cfg, void **ctx, char *name, int32_t namelen, uint64_t *mem_total) {
    *ctx = nullptr;
    if (dev < 0 || dev >= devices()) return FAILF("no CUDA device %d (%d found)", dev, devices());
    HostContext *cx = new (std::nothrow) HostContext{dev, {}, {}};
    if (!cx) return FAILF("context: out of host memory");
    int rc = context_config_of(cfg, &cx->cfg);
    if (rc) {
        delete cx;
        return rc;
    }
    if (cfg) cx->raw = *cfg;
    else zk_default_config(&cx->raw);
    snprintf(name, (size_t)namelen, "host stand-in (no GPU), device %d%s", dev, cx->cfg.spin ? ", spin-wait" : "");
    uint64_t t = dev_total.load();
    *mem_total = t ? t : 1ULL << 40;
    *ctx = cx;
    return 0;
}

int dev_zk_fini(void *ctx) {
    delete (HostContext *)ctx;
    return 0;
}

int dev_zk_device_count(int32_t *n) {
    *n = devices();
    return 0;
}

int dev_zk_mem_info(int32_t dev, uint64_t *free_bytes, uint64_t *total) {
    if (dev < 0 || dev >= devices()) return FAILF("no CUDA device %d", dev);
    uint64_t t = dev_total.load(), u = dev_used.load();
    if (!t) t = 1ULL << 40;
    *total = t;
    *free_bytes = u < t ? t - u : 0;
    return 0;
}

int dev_zk_host_alloc(void **p, uint64_t bytes) {
    uint64_t *b = (uint64_t *)calloc(1, bytes + 16);
    if (!b) return FAILF("pinned alloc of %llu bytes failed", (unsigned long long)bytes);
    b[0] = bytes;
    pinned_allocs.fetch_add(1);
    pinned_bytes.fetch_add(bytes);
    *p = b + 2; // 16-byte aligned, as calloc's
    return 0;
}
int dev_zk_host_free(void *p) {
    if (!p) return 0;
    uint64_t *b = (uint64_t *)p - 2;
    pinned_bytes.fetch_sub(b[0]);
    free(b);
    return 0;
}
int dev_zk_stream_create(void *ctx, void **s) {
    const HostContext *cx = (const HostContext *)ctx;
    if (!cx) return FAILF("no context: zk_init makes one");
    if (cx->dev >= devices()) return FAILF("no CUDA device %d", cx->dev);
    HostStream *hs = new (std::nothrow) HostStream; // deleted by zk_stream_destroy
    if (!hs) return FAILF("stream create failed");
    hs->cx = cx;
    hs->dev = cx->dev;
    *s = hs;
    return 0;
}
int dev_zk_stream_destroy(void *s) {
    on_stream(s);
    delete (HostStream *)s;
    return 0;
}
int dev_zk_stream_sync(void *s) {
    on_stream(s);
    return 0;
}
int dev_zk_dev_alloc(void **p, uint64_t bytes, void *s) {
    on_stream(s);
    return dalloc(p, bytes);
}
int dev_zk_dev_free(void *p, void *s) {
    on_stream(s);
    dfree(p);
    return 0;
}
int dev_zk_memset(void *p, uint64_t bytes, void *s) {
    on_stream(s);
    memset(p, 0, bytes);
    return 0;
}
int dev_zk_upload(void *dst, const void *src, uint64_t bytes, void *pin0, void *pin1, uint64_t pin_bytes, void *s) {
    on_stream(s);
    TRY(injected(COPY));
    void *pin[2] = {pin0, pin1};
    size_t k = 0;
    for (size_t off = 0; off < bytes; off += pin_bytes, k++) {
        size_t len = bytes - off < pin_bytes ? bytes - off : pin_bytes;
        memcpy(pin[k & 1], (const char *)src + off, len);
        memcpy((char *)dst + off, pin[k & 1], len);
    }
    return 0;
}
int dev_zk_h2d_async(void *dst, const void *src, uint64_t bytes, void *s) {
    on_stream(s);
    TRY(injected(COPY));
    memcpy(dst, src, bytes); // synchronous here: the stream is already in sync
    return 0;
}
int dev_zk_download(void *dst, const void *src, uint64_t bytes, void *s) {
    on_stream(s);
    TRY(injected(COPY));
    memcpy(dst, src, bytes);
    return 0;
}

template <class S>
int dev_compute_h(void *a, void *b, void *c, int32_t logn, const void *tw, const void *twinv, const void *gn,
                  const void *ginvn, int32_t conv, const uint64_t *zinv, void *s, void *side0, void *side1) {
    KERNEL_CALL(s);
    // The side streams are the call's too: a second call may not use them.
    for (void *side : {side0, side1})
        if (side && ((HostStream *)side)->dev != ((HostStream *)s)->dev)
            return FAILF("side stream on device %d, the call's stream on %d", ((HostStream *)side)->dev,
                         ((HostStream *)s)->dev);
    KernelCall k0(side0), k1(side1);
    TRY(k0.rc);
    TRY(k1.rc);
    HostDev d, d0, d1;
    TRY(compute_h_run(d, side0 ? &d0 : nullptr, side1 ? &d1 : nullptr, (S *)a, (S *)b, (S *)c, logn,
                      (const S *)tw, (const S *)twinv, (const S *)gn, (const S *)ginvn, conv, *(const S *)zinv));
    return d.sync(); // the GPU's H runs on; here the wait is the device time
}

template <class S> int dev_bench_ntt(void *x, int32_t logn, const void *tw, int32_t reps, float *ms, void *s) {
    KERNEL_CALL(s);
    HostDev d;
    for (int i = 0; i < reps; i++) TRY(dit(d, (S *)x, logn, (const S *)tw));
    *ms = 0;
    return 0;
}

} // namespace

#include "entries.cuh"
