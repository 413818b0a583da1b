// driver.cuh — the drivers of the MSM, batch-addition and NTT: the planning
// of sizes and offsets, the order of the steps, scratch memory and error
// handling, written once over a device D and compiled twice:
//
//   zkpipe.cu   D = CudaDev: kernels on a CUDA stream, CUB for sort and scan
//   hostlib.cpp D = HostDev: the same per-thread bodies in loops on the CPU,
//               std::stable_sort and a serial scan, and failures on request
//
// so that CI, with no GPU, runs the very driver logic the GPU runs. What a D
// provides (each returns 0 or an error code from fail_at):
//
//   alloc(void **p, size_t bytes), release(void *p), zero(p, bytes),
//   to_host(dst, src, bytes), sync(),
//   after(D &other): this device's later work waits for the work issued
//   on other so far (an event on the GPU: no host round trip)
//   digits, sort_pairs, bounds, counts, chunks, exclusive_sum,
//   level0<F>, levelN<F>, segment<F>, reduce<F>, ones<F>      (MSM, ones)
//   ntt_regs, ntt_pass, dif_stage, dit_stage, dif_tail, dit_head, scale_rev,
//   pointwise, powers                                         (NTT)
#pragma once

#include "errors.cuh"
#include "msm.cuh"
#include "ntt.cuh"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// ─── MSM plan ───────────────────────────────────────────────────────────────

// SORT_MAX_ITEMS is the most pairs one radix sort takes: CUB counts items in
// an int.
const size_t SORT_MAX_ITEMS = 0x7fffffff;
const uint32_t MSM_CHUNK = 32; // points one thread sums per level, by default

// MsmTuning: the MSM's knobs, for measuring alternatives on a GPU without a
// rebuild (bench/h200-session.sh): ZKPIPE_MSM_WINDOW (window bits, 4 to
// 20; unset: msm_window's choice by size), ZKPIPE_MSM_CHUNK (points a
// thread sums per level, 2 to 64) and ZKPIPE_MSM_SEGMENT (buckets a thread
// reduces, a power of two from 2 to 256: fewer means more threads for the
// segment kernel, more means fewer segment sums to combine). Read once a
// process.
struct MsmTuning {
    int window = 0;
    u32 chunk = MSM_CHUNK;
    u32 segment = 8; // run 5 of notes/cuda.md: 8 beat 32 by 1–3% (G1 2^22, 2^24, G2), and the stream by 2%
};
inline const MsmTuning &msm_tuning() {
    static const MsmTuning t = [] {
        MsmTuning r;
        if (const char *w = getenv("ZKPIPE_MSM_WINDOW")) r.window = atoi(w);
        if (const char *c = getenv("ZKPIPE_MSM_CHUNK")) {
            int v = atoi(c);
            if (v >= 2 && v <= 64) r.chunk = (u32)v;
        }
        if (const char *s = getenv("ZKPIPE_MSM_SEGMENT")) {
            int v = atoi(s);
            if (v >= 2 && v <= 256 && (v & (v - 1)) == 0) r.segment = (u32)v;
        }
        return r;
    }();
    return t;
}

// MsmPlan is one MSM's sizes. Every count that can pass 2^31 is a size_t.
//
//	c, nw      window bits and windows (msm_window, msm_windows)
//	half, nb   buckets a window (2^(c−1), signed digits) and in all
//	m          digit slots: n·nw; window w's are at [w·n, (w+1)·n)
//	sort_windows  windows per radix sort: whole windows, at most
//	           SORT_MAX_ITEMS pairs a sort (a key lives in one window, so
//	           sorting window groups apart keeps each bucket's run whole)
//
// Limits: n < 2^31 (a digit's value is its point's index with the sign in
// bit 31) and m < 2^32 (a bucket's run starts at a 32-bit position of the
// sorted digits): with 16-bit windows (n ≥ 2^20) every n < 2^28 fits,
// n = 2^27 (m = 2^31, two sorts) among them; larger MSMs are refused.
struct MsmPlan {
    size_t n;
    int c, nw;
    int bw;    // bucket sets: nw, or 1 over a precomputed table
    u32 half, nb;
    size_t m;
    int sort_windows;

    // sorts is how many radix sorts the digits take.
    int sorts() const { return (nw + sort_windows - 1) / sort_windows; }
    // sort k covers windows [w0, w1): items (w1−w0)·n from offset w0·n.
    void sort_range(int k, size_t *off, size_t *items) const {
        int w0 = k * sort_windows, w1 = w0 + sort_windows < nw ? w0 + sort_windows : nw;
        *off = (size_t)w0 * n;
        *items = (size_t)(w1 - w0) * n;
    }
    // level_total is the chunk count after a level over prev items: at
    // most prev/L whole chunks plus one partial chunk a bucket.
    u32 chunk; // points a thread sums per level
    size_t level_total(size_t prev) const { return prev / chunk + nb; }
};

// msm_plan fills p for n points (n ≥ 1), or fails naming the limit.
inline int msm_plan(size_t n, MsmPlan *p) {
    if (n == 0) return FAILF("msm: no points");
    if (n >= ((size_t)1 << 31)) return FAILF("msm: %zu points, the limit is 2^31 − 1", n);
    p->n = n;
    p->c = msm_window(n, msm_tuning().window);
    p->chunk = msm_tuning().chunk;
    p->nw = msm_windows(p->c);
    if (p->nw > ZK_MAX_WINDOWS) return FAILF("msm: %d windows, the limit is %d", p->nw, ZK_MAX_WINDOWS);
    p->bw = p->nw;
    p->half = 1u << (p->c - 1);
    p->nb = (u32)p->nw * p->half;
    p->m = n * (size_t)p->nw;
    if (p->m > 0xffffffffULL)
        return FAILF("msm: %zu points × %d windows = %zu digits, the limit is 2^32 − 1", n, p->nw, p->m);
    size_t per = SORT_MAX_ITEMS / n;
    p->sort_windows = per >= (size_t)p->nw ? p->nw : (int)per;
    return 0;
}

// MsmTable is a precomputed table (msm.cuh): nbase bases' multiples for
// c-bit windows, nw of them, at [w·nbase + i].
template <class F> struct MsmTable {
    const Affine<F> *pts;
    size_t nbase;
    int c, nw;
};

// msm_table_layout gives the window and windows of a table of nbase bases
// (the window msm_window would choose for an MSM of them all), or fails if
// the table cannot be addressed: every point's index must fit in 31 bits.
inline int msm_table_layout(size_t nbase, int *c, int *nw) {
    if (nbase == 0) return FAILF("msm table: no bases");
    *c = msm_window(nbase, msm_tuning().window);
    *nw = msm_windows(*c);
    if (*nw > ZK_MAX_WINDOWS) return FAILF("msm table: %d windows, the limit is %d", *nw, ZK_MAX_WINDOWS);
    if ((size_t)*nw * nbase >= ((size_t)1 << 31))
        return FAILF("msm table: %d windows × %zu bases is 2^31 points or more", *nw, nbase);
    return 0;
}

// msm_plan_table fills p for n scalars over a table: one set of buckets,
// all windows' digits in one sort (so a bucket's run is whole).
inline int msm_plan_table(size_t n, int c, int nw, MsmPlan *p) {
    if (n == 0) return FAILF("msm: no points");
    p->n = n;
    p->c = c;
    p->nw = nw;
    p->bw = 1;
    p->half = 1u << (c - 1);
    p->nb = p->half;
    p->m = n * (size_t)nw;
    p->chunk = msm_tuning().chunk;
    if (p->m > SORT_MAX_ITEMS)
        return FAILF("msm over a table: %zu scalars × %d windows = %zu digits, more than one sort takes (2^31 − 1)", n,
                     nw, p->m);
    p->sort_windows = nw;
    return 0;
}

// msm_precompute builds a table's points from the bases.
template <class F, class D> int msm_precompute(D &d, const Affine<F> *bases, const MsmTable<F> &t, Affine<F> *table) {
    TRY(d.template precompute<F>(bases, t.nbase, t.c, t.nw, table));
    TRY(d.sync());
    return 0;
}

// msm_precompute_raw and msm_table_raw (below msm_run) are the C API's table entries
// (zk_precompute_*, zk_msm_table_*) over untyped device pointers: the
// layout from nbase, then msm_precompute or msm_run over the table.
template <class F, class D> int msm_precompute_raw(D &d, const void *bases, uint64_t nbase, void *table) {
    MsmTable<F> t{(const Affine<F> *)table, nbase, 0, 0};
    TRY(msm_table_layout(nbase, &t.c, &t.nw));
    return msm_precompute<F>(d, (const Affine<F> *)bases, t, (Affine<F> *)table);
}

inline int bitlen(u32 x) {
    int r = 0;
    while (x) {
        r++;
        x >>= 1;
    }
    return r;
}

// ─── scratch ────────────────────────────────────────────────────────────────

// Scratch frees a set of device allocations when it goes out of scope, on
// every return path.
template <class D> struct Scratch {
    D &d;
    void *p[64];
    int k = 0;
    explicit Scratch(D &dev) : d(dev) {}
    Scratch(const Scratch &) = delete;
    Scratch &operator=(const Scratch &) = delete;
    template <class T> int get(T **out, size_t count) {
        int slot = -1;
        for (int i = 0; i < k; i++)
            if (!p[i]) slot = i;
        if (slot < 0) {
            if (k == 64) return FAILF("scratch: too many buffers");
            slot = k++;
        }
        p[slot] = nullptr;
        TRY(d.alloc((void **)out, (count ? count : 1) * sizeof(T)));
        p[slot] = *out;
        return 0;
    }
    void drop(void *q) {
        for (int i = 0; i < k; i++)
            if (p[i] == q) {
                d.release(q);
                p[i] = nullptr;
            }
    }
    ~Scratch() {
        for (int i = 0; i < k; i++)
            if (p[i]) d.release(p[i]);
    }
};

// ─── MSM ────────────────────────────────────────────────────────────────────

// msm_run: per-window sums of Σ scalars[i]·bases[idx ? idx[i] : i], copied
// to host_out (nw XYZZ points); the caller combines the windows.
//
//  1. digits: signed c-bit digits of every scalar, keyed by bucket
//  2. sort the (bucket, point) pairs by bucket, window group by window group
//  3. bounds: each bucket's run in the sorted pairs
//  4. levels: sum runs of up to pl.chunk points of a bucket, until every
//     bucket is one point
//  5. segments: Σ (q+1)·B_q over a window's buckets, in segments of S buckets
//  6. reduce each window's segments, copy the window sums to the host
//
// Over a table (tab non-null; bases unused), the digits of every window key
// one set of buckets and read the table's points directly; the one window
// sum is the MSM (*nw_out = 1).
template <class F, class D>
int msm_run(D &d, const Affine<F> *bases, const Fr *scalars, const u32 *idx, size_t n, XYZZ<F> *host_out, int *c_out,
            int *nw_out, const MsmTable<F> *tab = nullptr) {
    *c_out = 0;
    *nw_out = 0;
    if (n == 0) return 0;
    MsmPlan pl{};
    if (tab)
        TRY(msm_plan_table(n, tab->c, tab->nw, &pl));
    else
        TRY(msm_plan(n, &pl));
    const size_t m = pl.m;
    const u32 nb = pl.nb, half = pl.half;
    Scratch<D> sc(d);

    u32 *keys, *vals, *keys2, *vals2;
    TRY(sc.get(&keys, m));
    TRY(sc.get(&vals, m));
    TRY(sc.get(&keys2, m));
    TRY(sc.get(&vals2, m));
    if (tab) {
        TRY(d.digits_table(scalars, idx, n, tab->nbase, pl.c, pl.nw, keys, vals));
        bases = tab->pts;
        idx = nullptr; // the values index the table
    } else {
        TRY(d.digits(scalars, n, pl.c, pl.nw, keys, vals));
    }
    int end_bit = bitlen(nb); // the sentinel nb sorts last
    size_t tmp_bytes = 0, off0, items0;
    pl.sort_range(0, &off0, &items0); // the first sort is the largest
    TRY(d.sort_pairs(nullptr, &tmp_bytes, keys, keys2, vals, vals2, items0, end_bit));
    void *tmp = nullptr;
    TRY(sc.get((char **)&tmp, tmp_bytes));
    for (int k = 0; k < pl.sorts(); k++) {
        size_t off, items;
        pl.sort_range(k, &off, &items);
        TRY(d.sort_pairs(tmp, &tmp_bytes, keys + off, keys2 + off, vals + off, vals2 + off, items, end_bit));
    }
    sc.drop(tmp);
    sc.drop(keys);
    sc.drop(vals);

    u32 *start, *end, *cnt;
    TRY(sc.get(&start, nb));
    TRY(sc.get(&end, nb));
    TRY(sc.get(&cnt, nb));
    TRY(d.zero(start, nb * sizeof(u32)));
    TRY(d.zero(end, nb * sizeof(u32)));
    TRY(d.bounds(keys2, m, nb, start, end));
    TRY(d.counts(start, end, nb, cnt));
    sc.drop(keys2);
    sc.drop(end);

    // Levels. bound: the most points a bucket can hold (over a table, every
    // window's digits share the buckets).
    size_t bound = tab ? m : n, prev_total = m;
    XYZZ<F> *P = nullptr;
    int level = 0;
    do {
        u32 *chunks, *off;
        TRY(sc.get(&chunks, nb));
        TRY(sc.get(&off, nb));
        TRY(d.chunks(cnt, nb, pl.chunk, chunks));
        size_t sb = 0;
        TRY(d.exclusive_sum(nullptr, &sb, chunks, off, nb));
        void *st = nullptr;
        TRY(sc.get((char **)&st, sb));
        TRY(d.exclusive_sum(st, &sb, chunks, off, nb));
        sc.drop(st);
        size_t total = pl.level_total(prev_total);
        XYZZ<F> *Q;
        TRY(sc.get(&Q, total));
        if (level == 0)
            TRY(d.template level0<F>(bases, idx, vals2, start, cnt, off, chunks, nb, pl.chunk, (u32)total, Q));
        else
            TRY(d.template levelN<F>(P, start, cnt, off, chunks, nb, pl.chunk, (u32)total, Q));
        if (P) sc.drop(P);
        sc.drop(start);
        sc.drop(cnt);
        P = Q;
        start = off;
        cnt = chunks;
        prev_total = total;
        bound = (bound + pl.chunk - 1) / pl.chunk;
        level++;
    } while (bound > 1);
    sc.drop(vals2);

    u32 S = half < msm_tuning().segment ? half : msm_tuning().segment, spw = half / S, nseg = (u32)pl.bw * spw;
    XYZZ<F> *seg, *win;
    TRY(sc.get(&seg, nseg));
    TRY(sc.get(&win, pl.bw));
    TRY(d.template segment<F>(P, start, cnt, half, S, nseg, seg));
    TRY(d.template reduce<F>(seg, nseg, spw, win, (size_t)pl.bw));
    TRY(d.to_host(host_out, win, pl.bw * sizeof(XYZZ<F>)));
    TRY(d.sync());
    *c_out = pl.c;
    *nw_out = pl.bw;
    return 0;
}

template <class F, class D>
int msm_table_raw(D &d, const void *table, uint64_t nbase, const void *scalars, const uint32_t *idx, uint64_t n,
                  void *out, int32_t *c, int32_t *nw) {
    MsmTable<F> t{(const Affine<F> *)table, nbase, 0, 0};
    TRY(msm_table_layout(nbase, &t.c, &t.nw));
    int ci = 0, nwi = 0;
    TRY(msm_run<F>(d, nullptr, (const Fr *)scalars, idx, n, (XYZZ<F> *)out, &ci, &nwi, &t));
    *c = ci;
    *nw = nwi;
    return 0;
}

const size_t REDUCE_GROUPS = 1024; // the first pass of reduce_all

// reduce_all sums m points into one: groups of per points, then the groups.
template <class F, class D> int reduce_all(D &d, const XYZZ<F> *in, size_t m, XYZZ<F> *out, Scratch<D> &sc) {
    size_t g = (m + 127) / 128;
    if (g > REDUCE_GROUPS) g = REDUCE_GROUPS;
    if (g == 0) g = 1;
    size_t per = (m + g - 1) / g;
    XYZZ<F> *mid;
    TRY(sc.get(&mid, g));
    TRY(d.template reduce<F>(in, m, per, mid, g));
    TRY(d.template reduce<F>(mid, g, g, out, 1));
    return 0;
}

// ones_run: the sum of bases[j] for the set bits j < n of bitmap.
template <class F, class D> int ones_run(D &d, const Affine<F> *bases, const u64 *bitmap, size_t n, XYZZ<F> *host_out) {
    if (n == 0) {
        *host_out = XYZZ<F>::inf();
        return 0;
    }
    size_t nw = (n + 63) / 64;
    Scratch<D> sc(d);
    XYZZ<F> *part, *one;
    TRY(sc.get(&part, nw));
    TRY(sc.get(&one, 1));
    TRY(d.template ones<F>(bases, bitmap, n, nw, part));
    TRY(reduce_all<F>(d, part, nw, one, sc));
    TRY(d.to_host(host_out, one, sizeof(XYZZ<F>)));
    TRY(d.sync());
    return 0;
}

// ─── NTT ────────────────────────────────────────────────────────────────────

const u32 NTT_TAIL = 512;        // butterflies of the shared-memory radix-2 stages (1024 elements)
const int NTT_PASS = 8;          // stages a pass (k_ntt_pass)
const u32 NTT_PASS_THREADS = 512; // threads a pass block

// ntt_passes runs an NTT as passes of up to NTT_PASS stages (see
// group_pos): DIF from the top stage down, or DIT from the bottom up.
template <class D> int ntt_passes(D &d, Fr *x, int logn, const Fr *tw, bool difp) {
    u32 n = 1u << logn;
    int rem = logn;
    u32 mtop = n / 2, mlow = 1;
    while (rem > 0) {
        int s = rem < NTT_PASS ? rem : NTT_PASS;
        if (difp) mlow = mtop >> (s - 1);
        u32 ngroups = n >> s;
        TRY(d.ntt_pass(x, n, mlow, s, ngroups, tw, difp));
        rem -= s;
        if (difp)
            mtop = mlow / 2;
        else
            mlow <<= s;
    }
    return 0;
}

// NttVariant selects the NTT kernels (ZKPIPE_NTT, read at zk_init):
// regs (the default): passes of radix-8 rounds (k_ntt_regs); passes: passes
// of radix-2 stages in shared memory (k_ntt_pass); radix2: the first
// version, one launch a stage. All three compute the same transform: the
// knob is for measuring them against each other with one library.
enum NttVariant { NTT_REGS = 0, NTT_PASSES = 1, NTT_RADIX2 = 2 };

// ntt_variant_parse reads a ZKPIPE_NTT value (null or empty: the default),
// or fails naming the value and the choices.
inline int ntt_variant_parse(const char *v, NttVariant *out) {
    if (!v || !*v || strcmp(v, "regs") == 0)
        *out = NTT_REGS;
    else if (strcmp(v, "passes") == 0)
        *out = NTT_PASSES;
    else if (strcmp(v, "radix2") == 0)
        *out = NTT_RADIX2;
    else
        return FAILF("ZKPIPE_NTT=%s: unknown, the choices are regs (default), passes, radix2", v);
    return 0;
}
inline const char *ntt_variant_name(NttVariant v) {
    return v == NTT_REGS ? "regs" : v == NTT_PASSES ? "passes" : "radix2";
}

// NttTuning: the regs NTT's knobs, for measuring on a GPU without a
// rebuild: ZKPIPE_NTT_STAGES (most stages a pass, 3 to 12: 12 makes a
// 2^24 NTT two DRAM passes, 8 three) and ZKPIPE_NTT_BLOCK (elements a
// block, a power of two from 256 to 4096, at least 2^stages of a pass:
// 4096 is 128 KiB of shared memory and 512 threads). Read once a process;
// values out of range keep the default.
struct NttTuning {
    int stages = 12;
    int lgblock = 12;
};
inline const NttTuning &ntt_tuning() {
    static const NttTuning t = [] {
        NttTuning r;
        if (const char *e = getenv("ZKPIPE_NTT_STAGES")) {
            int v = atoi(e);
            if (v >= 3 && v <= 12) r.stages = v;
        }
        if (const char *e = getenv("ZKPIPE_NTT_BLOCK")) {
            int v = atoi(e);
            if (v >= 256 && v <= 4096 && (v & (v - 1)) == 0) r.lgblock = bitlen((u32)v) - 1;
        }
        return r;
    }();
    return t;
}

// ntt_regs runs an NTT as regs_plan's passes of radix-8 rounds. A DIF's
// last pass (mlow = 1) multiplies by scale (null: none) in bit-reversed
// order on its way out, which saves scale_rev's pass over memory.
template <class D> int ntt_regs(D &d, Fr *x, int logn, const Fr *tw, bool difp, const Fr *scale) {
    const NttTuning &t = ntt_tuning();
    RegsPass ps[10];
    int np = regs_plan(logn, t.stages, t.lgblock, difp, ps);
    for (int p = 0; p < np; p++)
        TRY(d.ntt_regs(x, logn, ps[p].lgm, ps[p].s, ps[p].lgG, tw, difp, difp && p == np - 1 ? scale : nullptr));
    return 0;
}

// dif: natural → bit-reversed order, then (scale non-null) position p
// multiplied by scale[bitrev(p)]; dit: bit-reversed → natural. The regs
// kernels need eight elements: smaller NTTs take the passes.
template <class D> int dif(D &d, Fr *x, int logn, const Fr *tw, NttVariant v, const Fr *scale = nullptr) {
    if (v == NTT_REGS && logn >= 3) return ntt_regs(d, x, logn, tw, true, scale);
    if (v == NTT_REGS || v == NTT_PASSES) {
        TRY(ntt_passes(d, x, logn, tw, true));
    } else {
        u32 n = 1u << logn;
        u32 m = n / 2;
        for (; m >= 1 && m > NTT_TAIL; m >>= 1) TRY(d.dif_stage(x, n, m, tw));
        if (m >= 1) TRY(d.dif_tail(x, n, m, tw));
    }
    if (scale) TRY(d.scale_rev(x, 1u << logn, logn, scale));
    return 0;
}

template <class D> int dit(D &d, Fr *x, int logn, const Fr *tw, NttVariant v) {
    if (v == NTT_REGS && logn >= 3) return ntt_regs(d, x, logn, tw, false, nullptr);
    if (v == NTT_REGS || v == NTT_PASSES) return ntt_passes(d, x, logn, tw, false);
    u32 n = 1u << logn;
    if (n < 2) return 0;
    u32 top = n / 2 < NTT_TAIL ? n / 2 : NTT_TAIL;
    TRY(d.dit_head(x, n, top, tw));
    for (u32 m = top * 2; m <= n / 2; m <<= 1) TRY(d.dit_stage(x, n, m, tw));
    return 0;
}

// domain_tables_run: see zk_domain_tables.
template <class D> int domain_tables_run(D &d, Fr *tw, Fr *twinv, Fr *gn, Fr *ginvn, int logn, const Fr *k) {
    if (logn < 0 || logn > 30) return FAILF("domain: 2^%d elements, the limit is 2^30", logn);
    size_t n = (size_t)1 << logn, h = n / 2;
    if (h) {
        TRY(d.powers(tw, h, k[0], k[5]));
        TRY(d.powers(twinv, h, k[1], k[5]));
    }
    TRY(d.powers(gn, n, k[2], k[4]));
    TRY(d.powers(ginvn, n, k[3], k[4]));
    return d.sync();
}

// compute_h_run: see zk_compute_h. Each of a, b, c: inverse NTT (DIF with
// ω⁻¹, then ·g^j/n in bit-reversed order), forward NTT on the coset (DIT);
// then a·b − c pointwise (÷Z for gnark); for gnark, back by the inverse
// coset NTT, leaving h bit-reversed.
//
// The three vectors' NTTs are independent: b's and c's run on side[0] and
// side[1] where given (else on d), forked from and joined back to d by
// device-side waits, so that NTTs too small to fill the GPU overlap. The
// result is in d's stream order: the caller's next work on d (the MSM)
// follows without a host round trip, and nothing here waits for the GPU.
template <class D>
int compute_h_run(D &d, D *side0, D *side1, Fr *a, Fr *b, Fr *c, int logn, const Fr *tw, const Fr *twinv,
                  const Fr *gn, const Fr *ginvn, int conv, Fr zinv, NttVariant ntt) {
    if (logn < 0 || logn > 30) return FAILF("compute h: 2^%d elements, the limit is 2^30", logn);
    if (conv != 0 && conv != 1) return FAILF("compute h: unknown convention %d", conv);
    u32 n = 1u << logn;
    Fr *x[3] = {a, b, c};
    D *on[3] = {&d, side0 ? side0 : &d, side1 ? side1 : &d};
    for (int i = 1; i < 3; i++)
        if (on[i] != &d) TRY(on[i]->after(d)); // fork: after whatever d did to b, c
    for (int i = 0; i < 3; i++) {
        TRY(dif(*on[i], x[i], logn, twinv, ntt, gn));
        TRY(dit(*on[i], x[i], logn, tw, ntt));
    }
    for (int i = 1; i < 3; i++)
        if (on[i] != &d) TRY(d.after(*on[i])); // join: the pointwise step reads all three
    TRY(d.pointwise(x[0], x[1], x[2], n, zinv, conv == 0));
    if (conv == 0) {
        TRY(dif(d, x[0], logn, twinv, ntt, ginvn));
    }
    return 0;
}
