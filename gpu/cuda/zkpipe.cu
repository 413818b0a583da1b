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

#include <chrono>
#include <mutex>
#include <thread>
#include <type_traits>
#include <shared_mutex>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <unordered_map>

// ZK_PART (build.sh): the library is compiled as translation units in
// parallel, each with one part of the C API and so only its kernels: 1 the
// device, streams, memory and the NTTs of every curve; then each curve's
// parts, as curves.h lists them: BN254's 2 the G1 MSMs, tables and ones; 3
// the G2 MSMs; 4 the G2 tables and ones; BLS12-381's 5, 6 and 7 the same,
// with 6's reduction kernels in 8 (levelN, reduce, bitsum, weigh) and 9
// (segment) (nvcc takes ~4 minutes over BN254's
// kernels on one core, most of it on the G2 kernels; BLS12-381's G2 MSMs
// alone took 301 s of a 302 s build on the H100's 16 cores, and of the
// reduction kernels' PTX, nvcc 11.8's, k_segment is 550k lines of 930k).
// Unset: all of it, one unit. The host state below is shared by the parts,
// hence inline (one definition across units); the rest of this file is per
// unit.
#ifndef ZK_PART
#define ZK_PART_HAS(k) ((k) != 0)
#else
#if ZK_PART < 1 || ZK_PART > ZK_PARTS_MAX
#error "ZK_PART: one of build.sh's parts (ZK_BUILD_PARTS, curves.h)"
#endif
#define ZK_PART_HAS(k) (ZK_PART == (k))
#endif

// zk_parts: the parts curves.h lists (0: a curve's G2 kernels not split);
// a ZK_PART not among them builds nothing.
#define ZK_CURVE_PARTS_LIST_(a, ID, name, label, C, g1, g2, g2tab, red, seg) , g1, g2, g2tab, red, seg
constexpr int zk_parts[] = {1 ZK_CURVES(ZK_CURVE_PARTS_LIST_, ~)};
constexpr bool zk_parts_ok() {
    for (int p : zk_parts)
        if (p < 0 || p > ZK_PARTS_MAX) return false;
    return true;
}
static_assert(zk_parts_ok(), "curves.h: a part past ZK_PARTS_MAX (zkpipe.cu defines ZK_PART_0 to ZK_PART_16)");
#ifdef ZK_PART
constexpr bool zk_part_listed() {
    for (int p : zk_parts)
        if (p == ZK_PART) return true;
    return false;
}
static_assert(zk_part_listed(), "ZK_PART: not one of curves.h's parts (build.sh's list, ZK_BUILD_PARTS)");
#endif

// ZkContext is one zk_init: a device and the config it was opened with
// (driver.cuh, ContextConfig). Every stream belongs to one (zk_stream_create),
// so a call on a stream runs with its context's knobs: two engines in one
// process, or two GPUs, may differ.
//
// cfg.spin: host threads waiting for the device spin (CUDA's default on a
// host with more cores than contexts) instead of sleeping until the device
// signals. Spinning burned about a core per GPU stage worker on the H200
// (tail-msm and b-g2 took as much CPU time as run time, notes/stream.md);
// blocking costs a wake-up (microseconds) per wait.
struct ZkContext {
    int dev;
    ContextConfig cfg;
    int ntt_smem_max; // k_ntt_regs's shared memory a block on dev
    int sms;          // dev's multiprocessors
};

// Each stream's context, recorded by zk_stream_create: a call on a stream
// first makes its device current for its host thread (on_stream), since Go
// runs calls on whichever thread is free and CUDA's current device is per
// thread. One process may so drive several GPUs.
inline std::shared_mutex streams_mu;
inline std::unordered_map<void *, const ZkContext *> stream_ctx;

// A curve's split G2 reduction (curves.h's red and seg parts; BLS12-381's:
// levelN, reduce, bitsum and weigh in 8, segment in 9: full XYZZ additions
// over its Fp2, spilling, the longest to compile): the kernels' launches are
// declared in every part and each defined in one, so that the group's part
// (6, the rest of its MSM), red and seg compile side by side. CudaDev's
// levelN, segment, reduce, bitsum and weigh call them for that group
// (SplitG2); every launch is a launch_* function's.
template <class F>
int split_levelN(cudaStream_t s, const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off,
                 const u32 *chunks, u32 nb, u32 L, u32 total, XYZZ<F> *out);
template <class F>
int split_segment(cudaStream_t s, const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, u32 nseg,
                  XYZZ<F> *acc, XYZZ<F> *run);
template <class F> int split_reduce(cudaStream_t s, const XYZZ<F> *in, size_t m, size_t per, XYZZ<F> *out, size_t groups);
template <class F>
int split_bitsum(cudaStream_t s, const XYZZ<F> *acc, const XYZZ<F> *run, u32 spw, u32 K, u32 parts, u32 per,
                 XYZZ<F> *out, size_t groups);
template <class F> int split_weigh(cudaStream_t s, const XYZZ<F> *sums, u32 n, u32 K, int lgS, XYZZ<F> *out);
// SplitG2<F>: F is the G2 field of a curve whose G2 reduction is split.
template <class F> constexpr bool SplitG2 = false;
#define ZK_SPLIT_G2_(a, ID, name, label, C, g1, g2, g2tab, red, seg)                                                   \
    template <> constexpr bool SplitG2<C::Fp2> = (red) != 0;
ZK_CURVES(ZK_SPLIT_G2_, ~)
#undef ZK_SPLIT_G2_

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

// on_stream makes s's device current and gives s's context.
int on_stream(void *s, const ZkContext **cx) {
    {
        std::shared_lock<std::shared_mutex> l(streams_mu);
        auto it = stream_ctx.find(s);
        *cx = it == stream_ctx.end() ? nullptr : it->second;
    }
    if (!*cx) return FAILF("a stream zk_stream_create did not make");
    CK(cudaSetDevice((*cx)->dev));
    return 0;
}
#define ON(s)                                                                                                          \
    const ZkContext *cx_ = nullptr;                                                                                    \
    TRY(on_stream(s, &cx_))

// same_device: s's device, into *dev, when the side streams (NULL or not)
// are on it too; events order streams of one device only.
int same_device(void *s, void *side0, void *side1, const ZkContext *cx[3]) {
    std::shared_lock<std::shared_mutex> l(streams_mu);
    void *all[3] = {s, side0, side1};
    for (int i = 0; i < 3; i++) {
        cx[i] = nullptr;
        if (i > 0 && !all[i]) continue;
        auto it = stream_ctx.find(all[i]);
        if (it == stream_ctx.end()) return FAILF("a stream zk_stream_create did not make");
        cx[i] = it->second;
        if (i > 0 && cx[i]->dev != cx[0]->dev)
            return FAILF("side stream on device %d, the call's stream on %d", cx[i]->dev, cx[0]->dev);
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

// set_sync_mode sets the current device's scheduling flags by spin and
// returns what CUDA said. CUDA 12 overwrites the flags of an initialised
// device; a runtime that refuses (an older one, with the context already
// made: cudaErrorSetOnActiveProcess) keeps the flags it has, which only
// costs CPU time: the caller reports it and goes on.
cudaError_t set_sync_mode(bool spin) {
    cudaError_t r = cudaSetDeviceFlags(spin ? cudaDeviceScheduleAuto : cudaDeviceScheduleBlockingSync);
    if (r != cudaSuccess) cudaGetLastError(); // not sticky: clear it
    return r;
}

// event_flags: events the host waits on block as streams do (set_sync_mode).
unsigned event_flags(const ZkContext *cx) {
    return cudaEventDisableTiming | (cx->cfg.spin ? 0u : cudaEventBlockingSync);
}

// The reduction kernels' launches, for CudaDev and parts 8 and 9 alike.
template <class F>
int launch_levelN(cudaStream_t s, const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off,
                  const u32 *chunks, u32 nb, u32 L, u32 total, XYZZ<F> *out) {
    k_levelN<F><<<blocks(total), TPB, 0, s>>>(in, start, cnt, off, chunks, nb, L, total, out);
    CKL();
    return 0;
}
template <class F>
int launch_segment(cudaStream_t s, const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, u32 nseg,
                   XYZZ<F> *acc, XYZZ<F> *run) {
    k_segment<F><<<blocks(nseg, SEGMENT_TPB), SEGMENT_TPB, 0, s>>>(P, start, cnt, half, S, nseg, acc, run);
    CKL();
    return 0;
}
template <class F>
int launch_bitsum(cudaStream_t s, const XYZZ<F> *acc, const XYZZ<F> *run, u32 spw, u32 K, u32 parts, u32 per,
                  XYZZ<F> *out, size_t groups) {
    k_bitsum<F><<<(unsigned)groups, RED, 0, s>>>(acc, run, spw, K, parts, per, out);
    CKL();
    return 0;
}
template <class F> int launch_weigh(cudaStream_t s, const XYZZ<F> *sums, u32 n, u32 K, int lgS, XYZZ<F> *out) {
    k_weigh<F><<<blocks(n), TPB, 0, s>>>(sums, n, K, lgS, out);
    CKL();
    return 0;
}
template <class F> int launch_reduce(cudaStream_t s, const XYZZ<F> *in, size_t m, size_t per, XYZZ<F> *out, size_t groups) {
    k_reduce<F><<<(unsigned)groups, RED, 0, s>>>(in, m, per, out);
    CKL();
    return 0;
}

// HostStage: a host thread's pinned buffer for the small results a driver
// reads back mid-call (the fullest bucket, the class sums). A copy into
// pageable memory waits inside CUDA, in blocking sync's slow wake-up; one
// into pinned memory is queued like a kernel, and CudaDev::wait's poll (or
// an event) sees it done. Pinned once a thread, at its first read-back, and kept; one
// CudaDev holds it at a time (busy), from its first staged copy to its sync.
const size_t STAGE_BYTES = 256 << 10;
struct HostStage {
    char *p = nullptr;
    bool busy = false;
    ~HostStage() {
        if (p) cudaFreeHost(p);
    }
};
inline thread_local HostStage host_stage;

// CudaDev runs driver.cuh's steps as kernels on stream s.
struct CudaDev {
    cudaStream_t s;
    const ZkContext *cx;
    // read-backs staged in host_stage, copied to their destinations at sync
    struct Staged {
        void *dst;
        size_t off, bytes;
    } staged[4];
    int nstaged = 0;
    size_t stage_used = 0;
    // to_host_early's copy: its destination, size and the event after it
    void *early_dst = nullptr;
    size_t early_bytes = 0;
    Event early_ev;
    // mark's event: where the call's last long kernel ends (polls only)
    Event mark_ev;
    bool marked = false;

    ~CudaDev() {
        if (nstaged || early_dst) { // a failed call's copies: let them land before the stage is reused
            cudaStreamSynchronize(s);
            host_stage.busy = false;
        }
    }
    bool polls() const { return !cx->cfg.spin && cx->cfg.poll_us > 0; }
    // pin_stage: this thread's stage, pinned at its first read-back
    int pin_stage() {
        if (!host_stage.p) CK(cudaHostAlloc((void **)&host_stage.p, STAGE_BYTES, cudaHostAllocPortable));
        return 0;
    }
    // poll: until query() (cudaStreamQuery or cudaEventQuery) says done, a
    // look every poll_us µs, sleeping in between (ContextConfig says why).
    template <class Q> int poll(Q query, const char *what) {
        cudaError_t r = query();
        if (r == cudaSuccess) return 0;
        // Linux stretches a sleep by the thread's timer slack (50 µs by
        // default): on the development machine a 20 µs sleep took 106 µs,
        // 54 with 1 µs of slack. Lowered for the loop, then restored.
        int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        if (slack > 1000) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        while (r == cudaErrorNotReady) {
            std::this_thread::sleep_for(std::chrono::microseconds(cx->cfg.poll_us));
            r = query();
        }
        if (slack > 1000) prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
        if (r != cudaSuccess) return cuda_fail(what, r, __FILE__, __LINE__);
        return 0;
    }
    // mark: the work queued so far is the call's long part (the MSM's level
    // 0): the next wait sleeps in CUDA's wait until it is done, and polls
    // only the short rest (polling a whole MSM would cost a thread's core:
    // a 20 µs sleep's wake-up took 25 µs of CPU in the development sandbox).
    int mark() {
        if (!polls()) return 0;
        if (!mark_ev.e) TRY(mark_ev.create(event_flags(cx)));
        CK(cudaEventRecord(mark_ev.e, s));
        marked = true;
        return 0;
    }
    // wait: until everything queued on s is done: CUDA's own wait (spinning
    // or blocking sync), but after a mark, CUDA's wait for the mark and a
    // poll for the rest.
    int wait() {
        if (!polls() || !marked) {
            CK(cudaStreamSynchronize(s));
            return 0;
        }
        marked = false;
        CK(cudaEventSynchronize(mark_ev.e));
        return poll([&] { return cudaStreamQuery(s); }, "cudaStreamQuery");
    }
    // to_host_early: dst (bytes ≤ STAGE_BYTES) is written by copied(), which
    // waits for this copy alone, not for the kernels queued after it (the
    // MSM reads its fullest bucket while level0 runs, so CUDA's own wait
    // costs nothing there). With the stage held it is to_host and sync at
    // once.
    int to_host_early(void *dst, const void *src, size_t bytes) {
        if (nstaged || early_dst || host_stage.busy || bytes > STAGE_BYTES) {
            TRY(to_host(dst, src, bytes));
            return sync();
        }
        TRY(pin_stage());
        if (!early_ev.e) TRY(early_ev.create(event_flags(cx)));
        CK(cudaMemcpyAsync(host_stage.p, src, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaEventRecord(early_ev.e, s));
        host_stage.busy = true;
        early_dst = dst;
        early_bytes = bytes;
        return 0;
    }
    int copied() {
        if (!early_dst) return 0;
        CK(cudaEventSynchronize(early_ev.e));
        memcpy(early_dst, host_stage.p, early_bytes);
        early_dst = nullptr;
        host_stage.busy = false;
        return 0;
    }
    int alloc(void **p, size_t bytes) {
        CK(cudaMallocAsync(p, bytes ? bytes : 1, s));
        return 0;
    }
    void release(void *p) {
        if (p) cudaFreeAsync(p, s);
    }
    // to_host: dst is written by the next sync. Polling, a small copy goes
    // through host_stage, a large one (or with the stage held elsewhere)
    // after a wait for the kernels before it.
    int to_host(void *dst, const void *src, size_t bytes) {
        if (polls()) {
            size_t off = (stage_used + 63) & ~(size_t)63;
            bool mine = !early_dst && (nstaged > 0 || !host_stage.busy);
            if (mine && nstaged < 4 && off + bytes <= STAGE_BYTES) {
                TRY(pin_stage());
                CK(cudaMemcpyAsync(host_stage.p + off, src, bytes, cudaMemcpyDeviceToHost, s));
                host_stage.busy = true;
                staged[nstaged++] = {dst, off, bytes};
                stage_used = off + bytes;
                return 0;
            }
            TRY(wait());
        }
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
        return 0;
    }
    int sync() {
        TRY(wait());
        for (int i = 0; i < nstaged; i++) memcpy(staged[i].dst, host_stage.p + staged[i].off, staged[i].bytes);
        if (nstaged) host_stage.busy = false;
        nstaged = 0;
        stage_used = 0;
        return 0;
    }
    int to_dev(void *dst, const void *src, size_t bytes) {
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
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
    template <class S>
    int digits(const S *scalars, const u32 *idx, size_t n, int c, int nw, u32 key0, u32 sentinel, u32 *keys,
               u32 *vals) {
        k_digits<S><<<blocks(n), TPB, 0, s>>>(scalars, idx, n, c, nw, key0, sentinel, keys, vals);
        CKL();
        return 0;
    }
    template <class S>
    int digits_table(const S *scalars, const u32 *idx, size_t n, size_t nbase, int c, int nw, u32 key0, u32 sentinel,
                     u32 *keys, u32 *vals) {
        k_digits_table<S><<<blocks(n), TPB, 0, s>>>(scalars, idx, n, nbase, c, nw, key0, sentinel, keys, vals);
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
    // level0_slots: the SMs times k_level0's blocks an SM times a block's
    // threads (0 where CUDA cannot say): driver.cuh's level0_chunk.
    template <class F> size_t level0_slots() const {
        constexpr int LB = Level0Block<F>::value;
        static const int per_sm = [] {
            int b = 0;
            return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k_level0<F, LEVEL0_PREFETCHES<F>>, LB, 0) ==
                           cudaSuccess
                       ? b
                       : 0;
        }();
        return (size_t)per_sm * (size_t)cx->sms * (size_t)LB;
    }
    template <class F>
    int level0(const Affine<F> *bases, const u32 *idx, const u32 *keys, const u32 *vals, size_t m, u32 nb,
               const u32 *start, const u32 *off, u32 L, XYZZ<F> *out) {
        u32 tiles = (u32)((m + L - 1) / L);
        constexpr bool PF = LEVEL0_PREFETCHES<F>;
        constexpr int LB = Level0Block<F>::value;
        k_level0<F, PF><<<blocks(tiles, LB), LB, 0, s>>>(bases, idx, keys, vals, m, nb, start, off, L, tiles, out);
        CKL();
        return 0;
    }
    template <class F>
    int levelN(const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb, u32 L,
               u32 total, XYZZ<F> *out) {
        if constexpr (SplitG2<F>) return split_levelN<F>(s, in, start, cnt, off, chunks, nb, L, total, out);
        else return launch_levelN<F>(s, in, start, cnt, off, chunks, nb, L, total, out);
    }
    template <class F>
    int segment(const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, u32 nseg, XYZZ<F> *acc,
                XYZZ<F> *run) {
        if constexpr (SplitG2<F>) return split_segment<F>(s, P, start, cnt, half, S, nseg, acc, run);
        else return launch_segment<F>(s, P, start, cnt, half, S, nseg, acc, run);
    }
    template <class F>
    int bitsum(const XYZZ<F> *acc, const XYZZ<F> *run, u32 spw, u32 K, u32 parts, u32 per, XYZZ<F> *out,
               size_t groups) {
        if constexpr (SplitG2<F>) return split_bitsum<F>(s, acc, run, spw, K, parts, per, out, groups);
        else return launch_bitsum<F>(s, acc, run, spw, K, parts, per, out, groups);
    }
    template <class F> int weigh(const XYZZ<F> *sums, u32 n, u32 K, int lgS, XYZZ<F> *out) {
        if constexpr (SplitG2<F>) return split_weigh<F>(s, sums, n, K, lgS, out);
        else return launch_weigh<F>(s, sums, n, K, lgS, out);
    }
    template <class F> int reduce(const XYZZ<F> *in, size_t m, size_t per, XYZZ<F> *out, size_t groups) {
        if constexpr (SplitG2<F>) return split_reduce<F>(s, in, m, per, out, groups);
        else return launch_reduce<F>(s, in, m, per, out, groups);
    }
    template <class F> int ones(const Affine<F> *bases, const u64 *bitmap, size_t n, size_t nw, XYZZ<F> *part) {
        k_ones<F><<<blocks(nw, 128), 128, 0, s>>>(bases, bitmap, n, nw, part);
        CKL();
        return 0;
    }

    // fixed-base products (fixed.cuh)
    template <class F> int fb_powers(const Affine<F> *base, int c, int nw, XYZZ<F> *pw) {
        k_fb_powers<F><<<1, 1, 0, s>>>(base, c, nw, pw);
        CKL();
        return 0;
    }
    template <class F> int fb_table(const XYZZ<F> *pw, int c, size_t entries, Affine<F> *table) {
        k_fb_table<F><<<blocks(entries, 128), 128, 0, s>>>(pw, c, entries, table);
        CKL();
        return 0;
    }
    template <class F>
    int fb_mul(const ScalarOf<F> *scalars, size_t m, const Affine<F> *table, int c, int nw, XYZZ<F> *out) {
        k_fb_mul<F><<<blocks(m, 128), 128, 0, s>>>(scalars, m, table, c, nw, out);
        CKL();
        return 0;
    }
    template <class F> int fb_affine(const XYZZ<F> *in, size_t m, size_t g, Affine<F> *out) {
        k_fb_affine<F><<<blocks(g, 128), 128, 0, s>>>(in, m, g, out);
        CKL();
        return 0;
    }

    // NTT
    template <class S>
    int ntt_regs(S *x, int lgn, int lgm, int st, int lgG, const S *tw, bool difp, const S *scale, bool last) {
        unsigned grid = 1u << (lgn - st - lgG), threads = 1u << (lgG + st - 3);
        size_t smem = regs_smem_bytes(1u << (lgG + st));
        if ((long long)smem > cx->ntt_smem_max)
            return FAILF("ntt: a block of 2^%d elements needs %zu bytes of shared memory, the device gives %d "
                         "(build with a smaller ZK_NTT_LGBLOCK)",
                         lgG + st, smem, cx->ntt_smem_max);
        if (difp)
            k_ntt_regs<S, true><<<grid, threads, smem, s>>>(x, lgn, lgm, st, lgG, tw, scale, last ? 1 : 0);
        else
            k_ntt_regs<S, false><<<grid, threads, smem, s>>>(x, lgn, lgm, st, lgG, tw, scale, last ? 1 : 0);
        CKL();
        return 0;
    }
    template <class S> int ntt_pass(S *x, u32 n, u32 mlow, int st, u32 ngroups, const S *tw, bool difp) {
        u32 G = NTT_PASS_THREADS >> (st - 1);
        unsigned grid = (ngroups + G - 1) / G;
        size_t smem = (size_t)G * (1u << st) * sizeof(S);
        if (difp)
            k_ntt_pass<S, true><<<grid, NTT_PASS_THREADS, smem, s>>>(x, n, mlow, st, ngroups, tw);
        else
            k_ntt_pass<S, false><<<grid, NTT_PASS_THREADS, smem, s>>>(x, n, mlow, st, ngroups, tw);
        CKL();
        return 0;
    }
    template <class S> int scale_rev(S *x, u32 n, int logn, const S *tab) {
        k_scale_rev<S><<<blocks(n), TPB, 0, s>>>(x, n, logn, tab);
        CKL();
        return 0;
    }
    template <class S> int pointwise(S *a, const S *b, const S *c, u32 n, S zinv, bool divide) {
        k_pointwise<S><<<blocks(n), TPB, 0, s>>>(a, b, c, n, zinv, divide ? 1 : 0);
        CKL();
        return 0;
    }
    template <class S> int powers(S *out, size_t count, S base, S f) {
        k_powers<S><<<blocks(count), TPB, 0, s>>>(out, count, base, f);
        CKL();
        return 0;
    }
};

} // namespace

// ─── parts: ZK_PART_k(…) keeps its arguments where this unit builds part k ──

#define ZK_PART_KEEP_(...) __VA_ARGS__
#define ZK_PART_DROP_(...)
#define ZK_PART_0 ZK_PART_DROP_
#if ZK_PART_HAS(1)
#define ZK_PART_1 ZK_PART_KEEP_
#else
#define ZK_PART_1 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(2)
#define ZK_PART_2 ZK_PART_KEEP_
#else
#define ZK_PART_2 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(3)
#define ZK_PART_3 ZK_PART_KEEP_
#else
#define ZK_PART_3 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(4)
#define ZK_PART_4 ZK_PART_KEEP_
#else
#define ZK_PART_4 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(5)
#define ZK_PART_5 ZK_PART_KEEP_
#else
#define ZK_PART_5 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(6)
#define ZK_PART_6 ZK_PART_KEEP_
#else
#define ZK_PART_6 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(7)
#define ZK_PART_7 ZK_PART_KEEP_
#else
#define ZK_PART_7 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(8)
#define ZK_PART_8 ZK_PART_KEEP_
#else
#define ZK_PART_8 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(9)
#define ZK_PART_9 ZK_PART_KEEP_
#else
#define ZK_PART_9 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(10)
#define ZK_PART_10 ZK_PART_KEEP_
#else
#define ZK_PART_10 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(11)
#define ZK_PART_11 ZK_PART_KEEP_
#else
#define ZK_PART_11 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(12)
#define ZK_PART_12 ZK_PART_KEEP_
#else
#define ZK_PART_12 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(13)
#define ZK_PART_13 ZK_PART_KEEP_
#else
#define ZK_PART_13 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(14)
#define ZK_PART_14 ZK_PART_KEEP_
#else
#define ZK_PART_14 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(15)
#define ZK_PART_15 ZK_PART_KEEP_
#else
#define ZK_PART_15 ZK_PART_DROP_
#endif
#if ZK_PART_HAS(16)
#define ZK_PART_16 ZK_PART_KEEP_
#else
#define ZK_PART_16 ZK_PART_DROP_
#endif

// A split G2 reduction's launches, each in its curve's red or seg part.
#define ZK_SPLIT_DEFS_(a, ID, name, label, C, g1, g2, g2tab, red, seg)                                                 \
    ZK_IN_PART(red, template <> int split_levelN<C::Fp2>(cudaStream_t s, const XYZZ<C::Fp2> *in, const u32 *start,    \
                                                         const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb,    \
                                                         u32 L, u32 total, XYZZ<C::Fp2> *out) {                        \
        return launch_levelN(s, in, start, cnt, off, chunks, nb, L, total, out);                                       \
    } template <> int split_reduce<C::Fp2>(cudaStream_t s, const XYZZ<C::Fp2> *in, size_t m, size_t per,              \
                                           XYZZ<C::Fp2> *out, size_t groups) {                                         \
        return launch_reduce(s, in, m, per, out, groups);                                                              \
    } template <> int split_bitsum<C::Fp2>(cudaStream_t s, const XYZZ<C::Fp2> *acc, const XYZZ<C::Fp2> *run, u32 spw, \
                                           u32 K, u32 parts, u32 per, XYZZ<C::Fp2> *out, size_t groups) {             \
        return launch_bitsum(s, acc, run, spw, K, parts, per, out, groups);                                            \
    } template <> int split_weigh<C::Fp2>(cudaStream_t s, const XYZZ<C::Fp2> *sums, u32 n, u32 K, int lgS,            \
                                          XYZZ<C::Fp2> *out) { return launch_weigh(s, sums, n, K, lgS, out); })        \
    ZK_IN_PART(seg, template <> int split_segment<C::Fp2>(cudaStream_t s, const XYZZ<C::Fp2> *P, const u32 *start,    \
                                                          const u32 *cnt, u32 half, u32 S, u32 nseg,                   \
                                                          XYZZ<C::Fp2> *acc, XYZZ<C::Fp2> *run) {                      \
        return launch_segment(s, P, start, cnt, half, S, nseg, acc, run);                                              \
    })
ZK_CURVES(ZK_SPLIT_DEFS_, ~)
#undef ZK_SPLIT_DEFS_

// ─── C API: entries.cuh's list, over CudaDev ───────────────────────────────

#define ZK_OPEN(sv, busy)                                                                                              \
    ON(sv);                                                                                                            \
    CudaDev d{(cudaStream_t)(sv), cx_};                                                                                \
    const MsmTuning &t = cx_->cfg.msm;                                                                                 \
    (void)t
#define ZK_OPEN_CTX(ctx)                                                                                               \
    if (!(ctx)) return FAILF("no context: zk_init makes one");                                                         \
    const MsmTuning &t = ((const ZkContext *)(ctx))->cfg.msm

namespace {
#if ZK_PART_HAS(1)
int dev_zk_init(int32_t dev, const zk_config *cfg, void **ctx, char *name, int32_t namelen, uint64_t *mem_total) {
    *ctx = nullptr;
    ContextConfig cc;
    TRY(context_config_of(cfg, &cc));
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    if (count == 0) return FAILF("no CUDA device");
    if (dev < 0 || dev >= count) return FAILF("no CUDA device %d (%d found)", dev, count);
    CK(cudaSetDevice(dev));
    // k_ntt_regs may take up to 128 KiB of shared memory a block (4096
    // elements, the largest block a build takes): more than the 48 KiB a
    // kernel gets without asking. A device with less (not the H200:
    // 227 KiB) gets what it has, and a pass that needs more fails naming
    // the build option (CudaDev::ntt_regs). Five blocks of 1024 elements
    // (33 KiB each) an SM need more shared memory than the default
    // carveout gives.
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    int regs_smem = (int)regs_smem_bytes(1u << 12);
    if (optin < regs_smem) regs_smem = optin;
    // every curve's Fr has kernels of its own
#define ZK_NTT_SMEM_(a, ID, name, label, C, ...)                                                                       \
    for (auto k : {k_ntt_regs<C::Fr, true>, k_ntt_regs<C::Fr, false>}) {                                               \
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, regs_smem));                           \
        CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100));                              \
    }
    ZK_CURVES(ZK_NTT_SMEM_, ~)
#undef ZK_NTT_SMEM_
    cudaError_t sync_mode = set_sync_mode(cc.spin);
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    char polls[48];
    snprintf(polls, sizeof polls, "waits poll every %d µs", cc.poll_us);
    snprintf(name, (size_t)namelen, "%s (sm_%d%d, %d SMs, %s)", p.name, p.major, p.minor, p.multiProcessorCount,
             sync_mode != cudaSuccess ? "CUDA's default waits: blocking sync refused"
             : cc.spin                ? "spin-wait"
             : cc.poll_us == 0        ? "blocking sync"
                                      : polls);
    *mem_total = p.totalGlobalMem;
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t thr = UINT64_MAX;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    ZkContext *cx = new (std::nothrow) ZkContext{dev, cc, regs_smem, p.multiProcessorCount};
    if (!cx) return FAILF("context: out of host memory");
    *ctx = cx;
    return 0;
}

int dev_zk_fini(void *ctx) {
    delete (ZkContext *)ctx;
    return 0;
}

int dev_zk_device_count(int32_t *n) {
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    *n = count;
    return 0;
}

int dev_zk_mem_info(int32_t dev, uint64_t *free_bytes, uint64_t *total) {
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

int dev_zk_host_alloc(void **p, uint64_t bytes) {
    CK(cudaHostAlloc(p, bytes, cudaHostAllocPortable));
    memset(*p, 0, bytes); // touch every page once, at start-up
    return 0;
}
int dev_zk_host_free(void *p) {
    CK(cudaFreeHost(p));
    return 0;
}

int dev_zk_stream_create(void *ctx, void **s) {
    const ZkContext *cx = (const ZkContext *)ctx;
    if (!cx) return FAILF("no context: zk_init makes one");
    CK(cudaSetDevice(cx->dev));
    CK(cudaStreamCreateWithFlags((cudaStream_t *)s, cudaStreamNonBlocking));
    std::unique_lock<std::shared_mutex> l(streams_mu);
    stream_ctx[*s] = cx;
    return 0;
}
int dev_zk_stream_destroy(void *s) {
    ON(s);
    // Synchronise, forget and destroy whatever the synchronisation says: the
    // caller forgets the handle, and CUDA may hand its address to the next
    // stream created, whose entry must not be erased by this one.
    cudaError_t sync = cudaStreamSynchronize((cudaStream_t)s);
    {
        std::unique_lock<std::shared_mutex> l(streams_mu);
        stream_ctx.erase(s);
    }
    cudaError_t destroy = cudaStreamDestroy((cudaStream_t)s);
    if (sync != cudaSuccess) return cuda_fail("cudaStreamSynchronize", sync, __FILE__, __LINE__);
    if (destroy != cudaSuccess) return cuda_fail("cudaStreamDestroy", destroy, __FILE__, __LINE__);
    return 0;
}
int dev_zk_stream_sync(void *s) {
    ON(s);
    CK(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

int dev_zk_dev_alloc(void **p, uint64_t bytes, void *s) {
    ON(s);
    CK(cudaMallocAsync(p, bytes ? bytes : 1, (cudaStream_t)s));
    return 0;
}
int dev_zk_dev_free(void *p, void *s) {
    ON(s);
    if (p) CK(cudaFreeAsync(p, (cudaStream_t)s));
    return 0;
}
int dev_zk_memset(void *p, uint64_t bytes, void *s) {
    ON(s);
    if (bytes) CK(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)s));
    return 0;
}

// zk_upload: the CPU fills one pinned buffer while the other is copied; the
// stream is synchronised before returning, whatever happened.
int dev_zk_upload(void *dst, const void *src, uint64_t bytes, void *pin0, void *pin1, uint64_t pin_bytes, void *sv) {
    ON(sv);
    cudaStream_t s = (cudaStream_t)sv;
    if (bytes == 0) return 0;
    Event ev[2];
    TRY(ev[0].create(event_flags(cx_)));
    TRY(ev[1].create(event_flags(cx_)));
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

int dev_zk_h2d_async(void *dst, const void *src, uint64_t bytes, void *s) {
    ON(s);
    if (!bytes) return 0;
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)s));
    return 0;
}

int dev_zk_download(void *dst, const void *src, uint64_t bytes, void *s) {
    ON(s);
    if (!bytes) return 0;
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)s));
    CK(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

template <class S>
int dev_compute_h(void *a, void *b, void *c, int32_t logn, const void *tw, const void *twinv, const void *gn,
                  const void *ginvn, int32_t conv, const uint64_t *zinv, void *s, void *side0, void *side1) {
    const ZkContext *cx[3];
    TRY(same_device(s, side0, side1, cx));
    CK(cudaSetDevice(cx[0]->dev));
    CudaDev d{(cudaStream_t)s, cx[0]}, d0{(cudaStream_t)side0, cx[1]}, d1{(cudaStream_t)side1, cx[2]};
    return compute_h_run(d, side0 ? &d0 : nullptr, side1 ? &d1 : nullptr, (S *)a, (S *)b, (S *)c, logn,
                         (const S *)tw, (const S *)twinv, (const S *)gn, (const S *)ginvn, conv, *(const S *)zinv);
}

// zk_bench_ntt times reps forward NTTs (DIT) of x in place; *ms is the
// mean per NTT, from CUDA events.
template <class S> int dev_bench_ntt(void *x, int32_t logn, const void *tw, int32_t reps, float *ms, void *sv) {
    ON(sv);
    cudaStream_t s = (cudaStream_t)sv;
    CudaDev d{s, cx_};
    if (reps < 1) return FAILF("bench ntt: %d repetitions", reps);
    TRY(dit(d, (S *)x, logn, (const S *)tw)); // warm-up
    Event e0, e1;
    TRY(e0.create(cudaEventDefault));
    TRY(e1.create(cudaEventDefault));
    CK(cudaEventRecord(e0.e, s));
    for (int i = 0; i < reps; i++) TRY(dit(d, (S *)x, logn, (const S *)tw));
    CK(cudaEventRecord(e1.e, s));
    CK(cudaEventSynchronize(e1.e));
    float ms_all = 0;
    CK(cudaEventElapsedTime(&ms_all, e0.e, e1.e));
    *ms = ms_all / (float)reps;
    return 0;
}
#endif
} // namespace

#include "entries.cuh"
