// hostlib.cpp — a CPU stand-in for libzkpipe_cuda.so with the same C API,
// built from zk.cuh with g++, so that gpu/cuda.go (purego loading, layouts,
// window combination) can be tested on a machine with no GPU:
//
//	g++ -O2 -std=c++17 -shared -fPIC hostlib.cpp -o /tmp/libzkpipe_host.so
//	ZKPIPE_CUDA_LIB=/tmp/libzkpipe_host.so go test -run CUDA ./gpu
//
// "Device" memory is host memory; the drivers mirror zkpipe.cu's step by step
// (std::stable_sort for CUB's radix sort, loops for the grids). Slow: for
// small sizes only.
#include "zk.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {

int zk_error(char *buf, int len) {
    snprintf(buf, (size_t)len, "host stand-in");
    return 0;
}
int zk_init(int dev, char *name, int namelen, size_t *mem_total) {
    snprintf(name, (size_t)namelen, "host stand-in (no GPU), device %d", dev);
    *mem_total = 0;
    return 0;
}
int zk_host_alloc(void **p, size_t bytes) {
    *p = calloc(1, bytes);
    return *p ? 0 : 1;
}
int zk_host_free(void *p) {
    free(p);
    return 0;
}
int zk_stream_create(void **s) {
    *s = (void *)1;
    return 0;
}
int zk_stream_sync(void *) { return 0; }
int zk_dev_alloc(void **p, size_t bytes, void *) {
    *p = malloc(bytes ? bytes : 1);
    memset(*p, 0xa5, bytes); // poison: unwritten output shows
    return *p ? 0 : 1;
}
int zk_dev_free(void *p, void *) {
    free(p);
    return 0;
}
int zk_memset(void *p, size_t bytes, void *) {
    memset(p, 0, bytes);
    return 0;
}
int zk_upload(void *dst, const void *src, size_t bytes, void *pin0, void *pin1, size_t pin_bytes, void *) {
    void *pin[2] = {pin0, pin1};
    size_t k = 0;
    for (size_t off = 0; off < bytes; off += pin_bytes, k++) {
        size_t len = bytes - off < pin_bytes ? bytes - off : pin_bytes;
        memcpy(pin[k & 1], (const char *)src + off, len);
        memcpy((char *)dst + off, pin[k & 1], len);
    }
    return 0;
}
int zk_download(void *dst, const void *src, size_t bytes, void *) {
    memcpy(dst, src, bytes);
    return 0;
}

int zk_domain_tables(void *tw, void *twinv, void *gn, void *ginvn, int logn, const u64 *consts, void *) {
    const Fr *k = (const Fr *)consts;
    size_t n = (size_t)1 << logn, h = n / 2;
    for (size_t i = 0; i < h; i++) powers_body(i, k[0], k[5], (Fr *)tw), powers_body(i, k[1], k[5], (Fr *)twinv);
    for (size_t i = 0; i < n; i++) powers_body(i, k[2], k[4], (Fr *)gn), powers_body(i, k[3], k[4], (Fr *)ginvn);
    return 0;
}

static void dif(Fr *x, int logn, const Fr *tw) {
    u32 n = 1u << logn;
    for (u32 m = n / 2; m >= 1; m >>= 1)
        for (u32 t = 0; t < n / 2; t++) dif_body(t, x, n, m, tw);
}
static void dit(Fr *x, int logn, const Fr *tw) {
    u32 n = 1u << logn;
    for (u32 m = 1; m <= n / 2; m <<= 1)
        for (u32 t = 0; t < n / 2; t++) dit_body(t, x, n, m, tw);
}
static void scale_rev(Fr *x, int logn, const Fr *tab) {
    u32 n = 1u << logn;
    for (u32 p = 0; p < n; p++) x[p] = x[p] * tab[bitrev(p, logn)];
}

int zk_compute_h(void *a, void *b, void *c, int logn, const void *tw, const void *twinv, const void *gn,
                 const void *ginvn, int conv, const u64 *zinv, void *) {
    u32 n = 1u << logn;
    Fr *x[3] = {(Fr *)a, (Fr *)b, (Fr *)c};
    for (int i = 0; i < 3; i++) {
        dif(x[i], logn, (const Fr *)twinv);
        scale_rev(x[i], logn, (const Fr *)gn);
        dit(x[i], logn, (const Fr *)tw);
    }
    Fr z = *(const Fr *)zinv;
    for (u32 i = 0; i < n; i++) {
        Fr r = x[0][i] * x[1][i] - x[2][i];
        if (conv == 0) r = r * z;
        x[0][i] = r;
    }
    if (conv == 0) {
        dif(x[0], logn, (const Fr *)twinv);
        scale_rev(x[0], logn, (const Fr *)ginvn);
    }
    return 0;
}

int zk_bench_ntt(void *x, int logn, const void *tw, int reps, float *ms, void *) {
    for (int i = 0; i < reps; i++) dit((Fr *)x, logn, (const Fr *)tw);
    *ms = 0;
    return 0;
}

} // extern "C"

template <class F>
static int msm(const Affine<F> *bases, const Fr *sc, const u32 *idx, size_t n, XYZZ<F> *out, int *c_out, int *nw_out) {
    *c_out = *nw_out = 0;
    if (n == 0) return 0;
    const u32 L = 32;
    int c = msm_window(n), nw = msm_windows(c);
    u32 half = 1u << (c - 1), nb = (u32)nw * half;
    size_t m = n * nw;
    std::vector<u32> keys(m), vals(m);
    for (size_t i = 0; i < n; i++) digits_body(i, sc, n, c, nw, keys.data(), vals.data());
    std::vector<size_t> ord(m);
    for (size_t i = 0; i < m; i++) ord[i] = i;
    std::stable_sort(ord.begin(), ord.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    std::vector<u32> k2(m), v2(m);
    for (size_t i = 0; i < m; i++) k2[i] = keys[ord[i]], v2[i] = vals[ord[i]];
    std::vector<u32> start(nb, 0), end(nb, 0), cnt(nb);
    for (size_t i = 0; i < m; i++) bounds_body(i, k2.data(), m, nb, start.data(), end.data());
    for (u32 b = 0; b < nb; b++) cnt[b] = end[b] - start[b];
    size_t bound = n, prev_total = m;
    std::vector<XYZZ<F>> P;
    int level = 0;
    do {
        std::vector<u32> chunks(nb), off(nb);
        for (u32 b = 0; b < nb; b++) chunks_body(b, cnt.data(), L, chunks.data());
        u32 acc = 0;
        for (u32 b = 0; b < nb; b++) off[b] = acc, acc += chunks[b];
        size_t total = prev_total / L + nb;
        std::vector<XYZZ<F>> Q(total);
        for (u32 t = 0; t < total; t++) {
            if (level == 0)
                level0_body(t, bases, idx, v2.data(), start.data(), cnt.data(), off.data(), chunks.data(), nb, L,
                            Q.data());
            else
                levelN_body(t, P.data(), start.data(), cnt.data(), off.data(), chunks.data(), nb, L, Q.data());
        }
        P = Q;
        start = off;
        cnt = chunks;
        prev_total = total;
        bound = (bound + L - 1) / L;
        level++;
    } while (bound > 1);
    u32 S = half < 32 ? half : 32, spw = half / S, nseg = (u32)nw * spw;
    std::vector<XYZZ<F>> seg(nseg);
    for (u32 s = 0; s < nseg; s++) segment_body(s, P.data(), start.data(), cnt.data(), half, S, seg.data());
    for (int w = 0; w < nw; w++) {
        XYZZ<F> r = XYZZ<F>::inf();
        for (u32 s = 0; s < spw; s++) r.add(seg[w * spw + s]);
        out[w] = r;
    }
    *c_out = c;
    *nw_out = nw;
    return 0;
}

template <class F> static int ones(const Affine<F> *bases, const u64 *bitmap, size_t n, XYZZ<F> *out) {
    size_t nw = (n + 63) / 64;
    std::vector<XYZZ<F>> part(nw);
    for (size_t t = 0; t < nw; t++) ones_body(t, bases, bitmap, n, part.data());
    XYZZ<F> r = XYZZ<F>::inf();
    for (auto &p : part) r.add(p);
    *out = r;
    return 0;
}

extern "C" {

int zk_msm_g1(const void *bases, const void *scalars, const u32 *idx, size_t n, void *out, int *c, int *nw, void *) {
    return msm<Fp>((const Affine<Fp> *)bases, (const Fr *)scalars, idx, n, (XYZZ<Fp> *)out, c, nw);
}
int zk_msm_g2(const void *bases, const void *scalars, const u32 *idx, size_t n, void *out, int *c, int *nw, void *) {
    return msm<Fp2>((const Affine<Fp2> *)bases, (const Fr *)scalars, idx, n, (XYZZ<Fp2> *)out, c, nw);
}
int zk_ones_g1(const void *bases, const u64 *bitmap, size_t n, void *out, void *) {
    return ones<Fp>((const Affine<Fp> *)bases, bitmap, n, (XYZZ<Fp> *)out);
}
int zk_ones_g2(const void *bases, const u64 *bitmap, size_t n, void *out, void *) {
    return ones<Fp2>((const Affine<Fp2> *)bases, bitmap, n, (XYZZ<Fp2> *)out);
}

} // extern "C"
