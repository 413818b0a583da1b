// zkpipe.cu — kernels and the C API of libzkpipe_cuda.so, which gpu/cuda.go
// loads at run time with purego. Every entry point returns 0 on success or
// a nonzero code, with a message for zk_error.
//
// Memory: device buffers come from the stream-ordered pool (cudaMallocAsync)
// whose release threshold is raised at init, so per-proof allocations are
// reused rather than returned to the driver. Pinned host memory is taken
// once (zk_host_alloc) and used as bounce buffers by zk_upload.
#include "zk.cuh"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <mutex>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

namespace {

std::mutex err_mu;
char err_buf[512] = "";

int fail(const char *what, cudaError_t e, int line) {
    std::lock_guard<std::mutex> g(err_mu);
    snprintf(err_buf, sizeof err_buf, "%s (zkpipe.cu:%d): %s", what, line, cudaGetErrorString(e));
    return e == cudaSuccess ? -1 : (int)e;
}

int failmsg(const char *msg, int line) {
    std::lock_guard<std::mutex> g(err_mu);
    snprintf(err_buf, sizeof err_buf, "%s (zkpipe.cu:%d)", msg, line);
    return -1;
}

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) return fail(#x, e_, __LINE__);                                                          \
    } while (0)
#define CKL() CK(cudaGetLastError())

const int TPB = 256;
inline unsigned blocks(size_t n, int tpb = TPB) { return (unsigned)((n + tpb - 1) / tpb); }

// ─── kernels ────────────────────────────────────────────────────────────────

__global__ void k_digits(const Fr *scalars, size_t n, int c, int nw, u32 *keys, u32 *vals) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) digits_body(i, scalars, n, c, nw, keys, vals);
}

__global__ void k_bounds(const u32 *keys, size_t m, u32 nb, u32 *start, u32 *end) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) bounds_body(i, keys, m, nb, start, end);
}

__global__ void k_cnt(const u32 *start, const u32 *end, u32 nb, u32 *cnt) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) cnt[b] = end[b] - start[b];
}

__global__ void k_chunks(const u32 *cnt, u32 nb, u32 L, u32 *chunks) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) chunks_body(b, cnt, L, chunks);
}

template <class F>
__global__ void k_level0(const Affine<F> *bases, const u32 *idx, const u32 *sorted_vals, const u32 *start,
                         const u32 *cnt, const u32 *off, const u32 *chunks, u32 nb, u32 L, u32 total, XYZZ<F> *out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) level0_body(t, bases, idx, sorted_vals, start, cnt, off, chunks, nb, L, out);
}

template <class F>
__global__ void k_levelN(const XYZZ<F> *in, const u32 *start, const u32 *cnt, const u32 *off, const u32 *chunks,
                         u32 nb, u32 L, u32 total, XYZZ<F> *out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) levelN_body(t, in, start, cnt, off, chunks, nb, L, out);
}

template <class F>
__global__ void k_segment(const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 half, u32 S, u32 nseg,
                          XYZZ<F> *out) {
    u32 s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < nseg) segment_body(s, P, start, cnt, half, S, out);
}

template <class F> __global__ void k_ones(const Affine<F> *bases, const u64 *bitmap, size_t n, size_t nw, XYZZ<F> *out) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nw) ones_body(t, bases, bitmap, n, out);
}

const int RED = 128; // threads of a reduction block

// k_reduce: block b sums in[b·per, min(m, (b+1)·per)) into out[b].
template <class F> __global__ void k_reduce(const XYZZ<F> *in, size_t m, size_t per, XYZZ<F> *out) {
    __shared__ XYZZ<F> sh[RED];
    size_t lo = (size_t)blockIdx.x * per;
    size_t hi = lo + per < m ? lo + per : m;
    XYZZ<F> acc = XYZZ<F>::inf();
    for (size_t i = lo + threadIdx.x; i < hi; i += RED) acc.add(in[i]);
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = RED / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            XYZZ<F> a = sh[threadIdx.x];
            a.add(sh[threadIdx.x + s]);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

__global__ void k_dif(Fr *x, u32 n, u32 m, const Fr *tw) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n / 2) dif_body(t, x, n, m, tw);
}
__global__ void k_dit(Fr *x, u32 n, u32 m, const Fr *tw) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n / 2) dit_body(t, x, n, m, tw);
}

// DIF stages m = top … 1 of blocks of 2·top consecutive elements, in
// shared memory: one block of top threads per 2·top elements.
__global__ void __launch_bounds__(512) k_dif_tail(Fr *x, u32 n, u32 top, const Fr *tw) {
    extern __shared__ Fr sx[];
    size_t base = (size_t)blockIdx.x * 2 * top;
    u32 t = threadIdx.x;
    sx[t] = x[base + t];
    sx[t + top] = x[base + t + top];
    __syncthreads();
    for (u32 m = top; m >= 1; m >>= 1) {
        u32 blk = t / m, j = t % m;
        u32 i0 = blk * 2 * m + j, i1 = i0 + m;
        Fr u = sx[i0], v = sx[i1];
        sx[i0] = u + v;
        sx[i1] = (u - v) * tw[(size_t)j * (n / (2 * m))];
        __syncthreads();
    }
    x[base + t] = sx[t];
    x[base + t + top] = sx[t + top];
}

// DIT stages m = 1 … top in shared memory.
__global__ void __launch_bounds__(512) k_dit_head(Fr *x, u32 n, u32 top, const Fr *tw) {
    extern __shared__ Fr sx[];
    size_t base = (size_t)blockIdx.x * 2 * top;
    u32 t = threadIdx.x;
    sx[t] = x[base + t];
    sx[t + top] = x[base + t + top];
    __syncthreads();
    for (u32 m = 1; m <= top; m <<= 1) {
        u32 blk = t / m, j = t % m;
        u32 i0 = blk * 2 * m + j, i1 = i0 + m;
        Fr u = sx[i0], v = sx[i1] * tw[(size_t)j * (n / (2 * m))];
        sx[i0] = u + v;
        sx[i1] = u - v;
        __syncthreads();
    }
    x[base + t] = sx[t];
    x[base + t + top] = sx[t + top];
}

// k_ntt_pass: one pass of s stages (see group_pos), G = blockDim/2^(s−1)
// consecutive groups a block, loaded so that consecutive threads read
// consecutive residues (contiguous addresses when mlow ≥ G).
template <bool DIF>
__global__ void __launch_bounds__(512) k_ntt_pass(Fr *x, u32 n, u32 mlow, int s, u32 ngroups, const Fr *tw) {
    extern __shared__ Fr sh[];
    u32 size = 1u << s;
    u32 G = blockDim.x >> (s - 1);
    u32 g0 = blockIdx.x * G;
    for (u32 q = threadIdx.x; q < G * size; q += blockDim.x) {
        u32 k = q / G, gi = q % G;
        if (g0 + gi < ngroups) sh[gi * size + k] = x[group_pos(g0 + gi, k, mlow, s)];
    }
    __syncthreads();
    u32 gi = threadIdx.x >> (s - 1), u = threadIdx.x & ((1u << (s - 1)) - 1);
    u32 g = g0 + gi;
    bool active = g < ngroups;
    u32 r = g % mlow;
    for (int i = 0; i < s; i++) {
        int tt = DIF ? s - 1 - i : i;
        if (active) group_bfly(sh + gi * size, u, tt, r, mlow, n, tw, DIF);
        __syncthreads();
    }
    for (u32 q = threadIdx.x; q < G * size; q += blockDim.x) {
        u32 k = q / G, gi2 = q % G;
        if (g0 + gi2 < ngroups) x[group_pos(g0 + gi2, k, mlow, s)] = sh[gi2 * size + k];
    }
}

__global__ void k_scale_rev(Fr *x, u32 n, int logn, const Fr *tab) {
    u32 p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) x[p] = x[p] * tab[bitrev(p, logn)];
}

__global__ void k_pointwise(Fr *a, const Fr *b, const Fr *c, u32 n, Fr zinv, int divide) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Fr r = a[i] * b[i] - c[i];
        if (divide) r = r * zinv;
        a[i] = r;
    }
}

__global__ void k_powers(Fr *out, size_t count, Fr base, Fr f) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) powers_body(i, base, f, out);
}

// ─── drivers ────────────────────────────────────────────────────────────────

const u32 TAIL = 512; // butterflies of the shared-memory NTT stages (1024 elements, 32 KiB)

// NTT by passes of up to PASS stages in shared memory (k_ntt_pass); with
// ZKPIPE_NTT=radix2 in the environment at zk_init, one launch per stage
// instead (the first version, kept as a fallback).
const int PASS = 8, PASS_THREADS = 512;
bool ntt_radix2 = false;

int ntt_passes(Fr *x, int logn, const Fr *tw, bool difp, cudaStream_t st) {
    u32 n = 1u << logn;
    int rem = logn;
    u32 mtop = n / 2, mlow = 1;
    while (rem > 0) {
        int s = rem < PASS ? rem : PASS;
        if (difp) mlow = mtop >> (s - 1);
        u32 ngroups = n >> s;
        u32 G = PASS_THREADS >> (s - 1);
        unsigned grid = (ngroups + G - 1) / G;
        size_t smem = (size_t)G * (1u << s) * sizeof(Fr);
        if (difp)
            k_ntt_pass<true><<<grid, PASS_THREADS, smem, st>>>(x, n, mlow, s, ngroups, tw);
        else
            k_ntt_pass<false><<<grid, PASS_THREADS, smem, st>>>(x, n, mlow, s, ngroups, tw);
        CKL();
        rem -= s;
        if (difp)
            mtop = mlow / 2;
        else
            mlow <<= s;
    }
    return 0;
}

int dif(Fr *x, int logn, const Fr *tw, cudaStream_t s) {
    if (!ntt_radix2) return ntt_passes(x, logn, tw, true, s);
    u32 n = 1u << logn;
    u32 m = n / 2;
    for (; m >= 1 && m > TAIL; m >>= 1) {
        k_dif<<<blocks(n / 2), TPB, 0, s>>>(x, n, m, tw);
        CKL();
    }
    if (m >= 1) {
        k_dif_tail<<<n / (2 * m), m, 2 * m * sizeof(Fr), s>>>(x, n, m, tw);
        CKL();
    }
    return 0;
}

int dit(Fr *x, int logn, const Fr *tw, cudaStream_t s) {
    if (!ntt_radix2) return ntt_passes(x, logn, tw, false, s);
    u32 n = 1u << logn;
    if (n < 2) return 0;
    u32 top = n / 2 < TAIL ? n / 2 : TAIL;
    k_dit_head<<<n / (2 * top), top, 2 * top * sizeof(Fr), s>>>(x, n, top, tw);
    CKL();
    for (u32 m = top * 2; m <= n / 2; m <<= 1) {
        k_dit<<<blocks(n / 2), TPB, 0, s>>>(x, n, m, tw);
        CKL();
    }
    return 0;
}

template <class T> int dalloc(T **p, size_t count, cudaStream_t s) {
    if (count == 0) count = 1;
    CK(cudaMallocAsync((void **)p, count * sizeof(T), s));
    return 0;
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        int r_ = (x);                                                                                                  \
        if (r_) return r_;                                                                                             \
    } while (0)

// Frees a set of stream-ordered allocations when it goes out of scope.
struct Scratch {
    cudaStream_t s;
    void *p[64];
    int k = 0;
    explicit Scratch(cudaStream_t st) : s(st) {}
    template <class T> int get(T **out, size_t count) {
        int slot = -1;
        for (int i = 0; i < k; i++)
            if (!p[i]) slot = i;
        if (slot < 0) {
            if (k == 64) return failmsg("scratch: too many buffers", __LINE__);
            slot = k++;
        }
        TRY(dalloc(out, count, s));
        p[slot] = *out;
        return 0;
    }
    void drop(void *q) {
        for (int i = 0; i < k; i++)
            if (p[i] == q) {
                cudaFreeAsync(q, s);
                p[i] = nullptr;
            }
    }
    ~Scratch() {
        for (int i = 0; i < k; i++)
            if (p[i]) cudaFreeAsync(p[i], s);
    }
};

int bitlen(u32 x) {
    int r = 0;
    while (x) {
        r++;
        x >>= 1;
    }
    return r;
}

const u32 CHUNK = 32; // points one thread sums per level

// msm: per-window sums of Σ scalars[i]·bases[idx ? idx[i] : i], copied to
// host_out (nw XYZZ points); the caller combines the windows.
template <class F>
int msm(const Affine<F> *bases, const Fr *scalars, const u32 *idx, size_t n, XYZZ<F> *host_out, int *c_out,
        int *nw_out, cudaStream_t s) {
    *c_out = 0;
    *nw_out = 0;
    if (n == 0) return 0;
    if (n >= (1u << 31)) return failmsg("msm: too many points", __LINE__);
    int c = msm_window(n), nw = msm_windows(c);
    u32 half = 1u << (c - 1), nb = (u32)nw * half;
    size_t m = n * (size_t)nw;
    Scratch sc(s);

    u32 *keys, *vals, *keys2, *vals2;
    TRY(sc.get(&keys, m));
    TRY(sc.get(&vals, m));
    TRY(sc.get(&keys2, m));
    TRY(sc.get(&vals2, m));
    k_digits<<<blocks(n), TPB, 0, s>>>(scalars, n, c, nw, keys, vals);
    CKL();
    size_t tmp_bytes = 0;
    int end_bit = bitlen(nb);
    CK(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, keys, keys2, vals, vals2, (int)m, 0, end_bit, s));
    void *tmp;
    TRY(sc.get((char **)&tmp, tmp_bytes));
    CK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, keys, keys2, vals, vals2, (int)m, 0, end_bit, s));
    sc.drop(tmp);
    sc.drop(keys);
    sc.drop(vals);

    u32 *start, *end, *cnt;
    TRY(sc.get(&start, nb));
    TRY(sc.get(&end, nb));
    TRY(sc.get(&cnt, nb));
    CK(cudaMemsetAsync(start, 0, nb * sizeof(u32), s));
    CK(cudaMemsetAsync(end, 0, nb * sizeof(u32), s));
    k_bounds<<<blocks(m), TPB, 0, s>>>(keys2, m, nb, start, end);
    CKL();
    k_cnt<<<blocks(nb), TPB, 0, s>>>(start, end, nb, cnt);
    CKL();
    sc.drop(keys2);
    sc.drop(end);

    // Levels: each sums runs of up to CHUNK points of a bucket, until every
    // bucket is one point. bound: the most points a bucket can hold.
    size_t bound = n, prev_total = m;
    XYZZ<F> *P = nullptr;
    int level = 0;
    do {
        u32 *chunks, *off;
        TRY(sc.get(&chunks, nb));
        TRY(sc.get(&off, nb));
        k_chunks<<<blocks(nb), TPB, 0, s>>>(cnt, nb, CHUNK, chunks);
        CKL();
        size_t sb = 0;
        CK(cub::DeviceScan::ExclusiveSum(nullptr, sb, chunks, off, (int)nb, s));
        void *st;
        TRY(sc.get((char **)&st, sb));
        CK(cub::DeviceScan::ExclusiveSum(st, sb, chunks, off, (int)nb, s));
        sc.drop(st);
        size_t total = prev_total / CHUNK + nb;
        XYZZ<F> *Q;
        TRY(sc.get(&Q, total));
        if (level == 0) {
            k_level0<F><<<blocks(total), TPB, 0, s>>>(bases, idx, vals2, start, cnt, off, chunks, nb, CHUNK,
                                                      (u32)total, Q);
        } else {
            k_levelN<F><<<blocks(total), TPB, 0, s>>>(P, start, cnt, off, chunks, nb, CHUNK, (u32)total, Q);
        }
        CKL();
        if (P) sc.drop(P);
        sc.drop(start);
        sc.drop(cnt);
        P = Q;
        start = off;
        cnt = chunks;
        prev_total = total;
        bound = (bound + CHUNK - 1) / CHUNK;
        level++;
    } while (bound > 1);
    sc.drop(vals2);

    u32 S = half < 32 ? half : 32, spw = half / S, nseg = (u32)nw * spw;
    XYZZ<F> *seg, *win;
    TRY(sc.get(&seg, nseg));
    TRY(sc.get(&win, nw));
    k_segment<F><<<blocks(nseg, 128), 128, 0, s>>>(P, start, cnt, half, S, nseg, seg);
    CKL();
    k_reduce<F><<<nw, RED, 0, s>>>(seg, nseg, spw, win);
    CKL();
    CK(cudaMemcpyAsync(host_out, win, nw * sizeof(XYZZ<F>), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    *c_out = c;
    *nw_out = nw;
    return 0;
}

// reduce_all sums m points into one (two passes of k_reduce).
template <class F> int reduce_all(const XYZZ<F> *in, size_t m, XYZZ<F> *out, Scratch &sc, cudaStream_t s) {
    size_t g = (m + RED - 1) / RED;
    if (g > 1024) g = 1024;
    if (g == 0) g = 1;
    size_t per = (m + g - 1) / g;
    XYZZ<F> *mid;
    TRY(sc.get(&mid, g));
    k_reduce<F><<<(unsigned)g, RED, 0, s>>>(in, m, per, mid);
    CKL();
    k_reduce<F><<<1, RED, 0, s>>>(mid, g, g, out);
    CKL();
    return 0;
}

template <class F> int ones(const Affine<F> *bases, const u64 *bitmap, size_t n, XYZZ<F> *host_out, cudaStream_t s) {
    if (n == 0) {
        *host_out = XYZZ<F>::inf();
        return 0;
    }
    size_t nw = (n + 63) / 64;
    Scratch sc(s);
    XYZZ<F> *part, *one;
    TRY(sc.get(&part, nw));
    TRY(sc.get(&one, 1));
    k_ones<F><<<blocks(nw, 128), 128, 0, s>>>(bases, bitmap, n, nw, part);
    CKL();
    TRY(reduce_all(part, nw, one, sc, s));
    CK(cudaMemcpyAsync(host_out, one, sizeof(XYZZ<F>), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    return 0;
}

} // namespace

// ─── C API ──────────────────────────────────────────────────────────────────

extern "C" {

int zk_error(char *buf, int len) {
    std::lock_guard<std::mutex> g(err_mu);
    snprintf(buf, (size_t)len, "%s", err_buf);
    return 0;
}

// zk_init selects the device, raises the pool's release threshold, and
// reports the device's name and memory.
int zk_init(int dev, char *name, int namelen, size_t *mem_total) {
    int count = 0;
    CK(cudaGetDeviceCount(&count));
    if (count == 0) return failmsg("no CUDA device", __LINE__);
    if (dev < 0 || dev >= count) return failmsg("no such CUDA device", __LINE__);
    CK(cudaSetDevice(dev));
    const char *ntt = getenv("ZKPIPE_NTT");
    ntt_radix2 = ntt && strcmp(ntt, "radix2") == 0;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    snprintf(name, (size_t)namelen, "%s (sm_%d%d, %d SMs)", p.name, p.major, p.minor, p.multiProcessorCount);
    *mem_total = p.totalGlobalMem;
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t thr = UINT64_MAX;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    return 0;
}

int zk_host_alloc(void **p, size_t bytes) {
    CK(cudaHostAlloc(p, bytes, cudaHostAllocDefault));
    memset(*p, 0, bytes); // touch every page once, at start-up
    return 0;
}
int zk_host_free(void *p) {
    CK(cudaFreeHost(p));
    return 0;
}

int zk_stream_create(void **s) {
    CK(cudaStreamCreateWithFlags((cudaStream_t *)s, cudaStreamNonBlocking));
    return 0;
}
int zk_stream_sync(void *s) {
    CK(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

int zk_dev_alloc(void **p, size_t bytes, void *s) {
    CK(cudaMallocAsync(p, bytes ? bytes : 1, (cudaStream_t)s));
    return 0;
}
int zk_dev_free(void *p, void *s) {
    if (p) CK(cudaFreeAsync(p, (cudaStream_t)s));
    return 0;
}
int zk_memset(void *p, size_t bytes, void *s) {
    if (bytes) CK(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)s));
    return 0;
}

// zk_upload copies bytes of pageable host memory to the device through two
// pinned bounce buffers of pin_bytes each: the CPU fills one while the other
// is copied. It returns when the data are on the device.
int zk_upload(void *dst, const void *src, size_t bytes, void *pin0, void *pin1, size_t pin_bytes, void *sv) {
    cudaStream_t s = (cudaStream_t)sv;
    if (bytes == 0) return 0;
    cudaEvent_t ev[2];
    CK(cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming));
    void *pin[2] = {pin0, pin1};
    int rc = 0;
    size_t k = 0;
    for (size_t off = 0; off < bytes; off += pin_bytes, k++) {
        size_t len = bytes - off < pin_bytes ? bytes - off : pin_bytes;
        int b = (int)(k & 1);
        cudaError_t e = cudaSuccess;
        if (k >= 2) e = cudaEventSynchronize(ev[b]);
        if (e == cudaSuccess) {
            memcpy(pin[b], (const char *)src + off, len);
            e = cudaMemcpyAsync((char *)dst + off, pin[b], len, cudaMemcpyHostToDevice, s);
        }
        if (e == cudaSuccess) e = cudaEventRecord(ev[b], s);
        if (e != cudaSuccess) {
            rc = fail("upload", e, __LINE__);
            break;
        }
    }
    cudaError_t e = cudaStreamSynchronize(s);
    if (!rc && e != cudaSuccess) rc = fail("upload sync", e, __LINE__);
    cudaEventDestroy(ev[0]);
    cudaEventDestroy(ev[1]);
    return rc;
}

int zk_download(void *dst, const void *src, size_t bytes, void *s) {
    if (!bytes) return 0;
    CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)s));
    CK(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

// zk_domain_tables fills a domain's tables: tw[k] = ω^k and twinv[k] = ω^−k
// for k < n/2; gn[j] = g^j/n and ginvn[j] = g^−j/n for j < n. consts holds
// ω, ω⁻¹, g, g⁻¹, 1/n, 1 (Montgomery form).
int zk_domain_tables(void *tw, void *twinv, void *gn, void *ginvn, int logn, const u64 *consts, void *sv) {
    cudaStream_t s = (cudaStream_t)sv;
    const Fr *k = (const Fr *)consts;
    size_t n = (size_t)1 << logn, h = n / 2;
    if (h) {
        k_powers<<<blocks(h), TPB, 0, s>>>((Fr *)tw, h, k[0], k[5]);
        CKL();
        k_powers<<<blocks(h), TPB, 0, s>>>((Fr *)twinv, h, k[1], k[5]);
        CKL();
    }
    k_powers<<<blocks(n), TPB, 0, s>>>((Fr *)gn, n, k[2], k[4]);
    CKL();
    k_powers<<<blocks(n), TPB, 0, s>>>((Fr *)ginvn, n, k[3], k[4]);
    CKL();
    CK(cudaStreamSynchronize(s));
    return 0;
}

// zk_compute_h: h from a, b, c (each n elements on the device, Montgomery
// form) into a. conv 0: gnark's (a·b − c)/Z on the coset, h bit-reversed;
// conv 1: snarkjs's a·b − c on the odd coset, natural order.
int zk_compute_h(void *a, void *b, void *c, int logn, const void *tw, const void *twinv, const void *gn,
                 const void *ginvn, int conv, const u64 *zinv, void *sv) {
    cudaStream_t s = (cudaStream_t)sv;
    u32 n = 1u << logn;
    Fr *x[3] = {(Fr *)a, (Fr *)b, (Fr *)c};
    for (int i = 0; i < 3; i++) {
        TRY(dif(x[i], logn, (const Fr *)twinv, s));
        k_scale_rev<<<blocks(n), TPB, 0, s>>>(x[i], n, logn, (const Fr *)gn);
        CKL();
        TRY(dit(x[i], logn, (const Fr *)tw, s));
    }
    k_pointwise<<<blocks(n), TPB, 0, s>>>(x[0], x[1], x[2], n, *(const Fr *)zinv, conv == 0);
    CKL();
    if (conv == 0) {
        TRY(dif(x[0], logn, (const Fr *)twinv, s));
        k_scale_rev<<<blocks(n), TPB, 0, s>>>(x[0], n, logn, (const Fr *)ginvn);
        CKL();
    }
    CK(cudaStreamSynchronize(s));
    return 0;
}

// zk_bench_ntt times reps forward NTTs (DIT) of x in place; *ms is the
// median-free mean per NTT, from CUDA events.
int zk_bench_ntt(void *x, int logn, const void *tw, int reps, float *ms, void *sv) {
    cudaStream_t s = (cudaStream_t)sv;
    TRY(dit((Fr *)x, logn, (const Fr *)tw, s)); // warm-up
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, s));
    for (int i = 0; i < reps; i++) TRY(dit((Fr *)x, logn, (const Fr *)tw, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    *ms = t / (float)reps;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 0;
}

int zk_msm_g1(const void *bases, const void *scalars, const u32 *idx, size_t n, void *out, int *c, int *nw, void *s) {
    return msm<Fp>((const Affine<Fp> *)bases, (const Fr *)scalars, idx, n, (XYZZ<Fp> *)out, c, nw, (cudaStream_t)s);
}
int zk_msm_g2(const void *bases, const void *scalars, const u32 *idx, size_t n, void *out, int *c, int *nw, void *s) {
    return msm<Fp2>((const Affine<Fp2> *)bases, (const Fr *)scalars, idx, n, (XYZZ<Fp2> *)out, c, nw,
                    (cudaStream_t)s);
}
int zk_ones_g1(const void *bases, const u64 *bitmap, size_t n, void *out, void *s) {
    return ones<Fp>((const Affine<Fp> *)bases, bitmap, n, (XYZZ<Fp> *)out, (cudaStream_t)s);
}
int zk_ones_g2(const void *bases, const u64 *bitmap, size_t n, void *out, void *s) {
    return ones<Fp2>((const Affine<Fp2> *)bases, bitmap, n, (XYZZ<Fp2> *)out, (cudaStream_t)s);
}

} // extern "C"
