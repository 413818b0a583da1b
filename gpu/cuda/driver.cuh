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
//   alloc(void **p, size_t bytes), release(void *p),
//   to_host(dst, src, bytes), sync(),
//   to_host_early(dst, src, bytes), copied(): dst written by copied(),
//   which waits for that copy, not for the kernels queued after it
//   mark(): the work queued so far is the call's long part (the next wait
//   sleeps through it and polls the rest: ContextConfig)
//   after(D &other): this device's later work waits for the work issued
//   on other so far (an event on the GPU: no host round trip)
//   digits, sort_pairs, runs, max_of, tiles, chunks, exclusive_sum,
//   level0<F>, levelN<F>, segment<F>, reduce<F>, ones<F>      (MSM, ones)
//   level0_slots<F>(): the level0 threads the device holds at once (0:
//   unknown; level0_chunk)
//   ntt_regs, ntt_pass, scale_rev, pointwise, powers          (NTT)
//   to_dev(dst, src, bytes): a copy of host memory to the device in the
//   stream's order; fb_powers<F>, fb_table<F>, fb_mul<F>, fb_affine<F>
//   (the fixed-base products, fixed.cuh)
//
// The knobs come in as values (MsmTuning, from the zk_config a library
// context was made with: zkpipe.h), never from the environment.
#pragma once

#include "errors.cuh"
#include "fixed.cuh"
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

// MsmChunk<F>: the chunk an MSM over F takes when the config names none.
// BLS12-381's points sum more than BN254's 32 a thread: fewer, longer
// tiles, so fewer partial sums for levelN's full additions. Measured on
// the H100, as ZKPIPE_MSM_CHUNK:
// - G2 (96-byte coordinates, level0 and levelN at 255 registers with
//   spills) 128: 64 beat 32 in notes/h100-2026-12-06b.md (G2 MSM 2^20 27.3,
//   27.1 ms against 27.9, 28.0); 128 against 64 in notes/h100-2026-12-06e.md
//   was 24.8, 25.0 against 25.3, 25.7 on call 4's machine and 24.9, 24.9,
//   25.0 against 24.7, 24.8, 24.6 on call 5's: level within noise, and at
//   or under 25 in every sample, which 64 was not.
// - G1 64: 12-06e, call 6, A B A B: 8.2, 25.8, 93.6 and 8.2, 25.9, 93.5 ms
//   at 2^20, 2^22, 2^24 against 8.3, 26.5, 95.9 and 8.3, 26.3, 95.7 at 32
//   (128: 8.6, 26.1, 92.6 in call 5; 12-06b, before the bit-class
//   reduction, had 64 level with 32).
// BN254's kernels keep 32.
template <class F> struct MsmChunk {
    static constexpr u32 value = MSM_CHUNK;
};
template <> struct MsmChunk<Bls12381Fp> {
    static constexpr u32 value = 64;
};
template <> struct MsmChunk<Bls12381Fp2> {
    static constexpr u32 value = 128;
};

// level0_chunk: the points a level0 thread sums (a tile) for m sorted pairs,
// from the plan's chunk L and slots, the level0 threads the device holds at
// once (0: unknown). Level0's tiles are equal work, run in waves of
// `slots`; where even tiles of 2L take LEVEL0_MIN_WAVES waves or more, the
// tiles widen (up to 2L) until the fewest whole waves hold them: fewer
// partial sums for levelN's full additions, and no last wave part empty.
// Fewer waves than that keep L: few long tiles measured slower (BLS12-381's
// G1 2^20 at a chunk of 128, 3 waves: 8.6 ms against 8.2 at 64). Never
// below L, so the plan's bounds (level_total, msm_plan_bytes) hold.
// Level0Widens<F>: the groups whose chunk level0_chunk widens, where it was
// measured: BLS12-381's G1 (H100, notes/h100-2026-12-06f.md calls 2 and 3, as
// ZKPIPE_MSM_CHUNK: 2^22 at 135 (8 whole waves) 25.4 to 25.6 ms against
// 25.5 to 25.9 at 64; 2^24 at 128 92.4, 92.5 against 93.1 to 93.5, and with
// 22-bit windows 90.1, 90.1 against 90.8, 90.9).
const size_t LEVEL0_MIN_WAVES = 8;
inline u32 level0_chunk(size_t m, u32 L, size_t slots) {
    if (slots == 0 || m == 0) return L;
    const size_t widest = 2 * (size_t)L * slots;        // pairs a wave of the widest tiles sums
    const size_t waves = (m + widest - 1) / widest;     // the fewest waves of tiles up to 2L
    if (waves < LEVEL0_MIN_WAVES) return L;
    const size_t fit = (m + waves * slots - 1) / (waves * slots); // ≤ 2L
    return fit > L ? (u32)fit : L;
}
template <class F> struct Level0Widens {
    static constexpr bool value = false;
};
template <> struct Level0Widens<Bls12381Fp> {
    static constexpr bool value = true;
};

// MsmTuning: the MSM's knobs, from zk_config (zkpipe.h) at zk_init, for
// measuring alternatives on a GPU without a rebuild (bench/h200-session.sh):
// window (bits, 4 to MSM_MAX_WINDOW; 0: msm_window's choice by size, and
// msm_table_window's for a table), chunk (points a thread sums per level,
// 2 to 256; 0: MsmChunk's by group) and segment (buckets a thread reduces, a power of two from 2
// to 256: fewer means more threads for the segment kernel, more means fewer
// segment sums to combine; 0: msm_segment's choice). The defaults are the
// zero value's, and zk_default_config's.
struct MsmTuning {
    int window = 0;
    u32 chunk = 0;   // msm_chunk's choice
    u32 segment = 0; // msm_segment's choice; run 5 of notes/cuda.md: 8 beat 32 by 1–3% up to 2^16 buckets
    int piece_log = 0; // msm_piece's choice
};

// MSM_PIECE_LOG: an MSM of more scalars than 2^MSM_PIECE_LOG runs in pieces
// of that many (msm_run_batch), so that its scratch is bounded whatever its
// size: 2^24 scalars of 16-bit windows hold about 6 GiB (sorted digits and
// their level sums, msm_plan_bytes), where a 2^27 MSM in one run held 48
// GiB. A piece's bucket reduction is a few hundred thousand additions
// against its 2^28 digits' additions, so pieces cost little; and the
// kernels' largest measured MSMs (2^24) stay one run.
const int MSM_PIECE_LOG = 24, MSM_PIECE_LOG_MIN = 10, MSM_PIECE_LOG_MAX = 30;

// msm_piece: the most scalars one run of an MSM takes under t.
inline size_t msm_piece(const MsmTuning &t) { return (size_t)1 << (t.piece_log ? t.piece_log : MSM_PIECE_LOG); }

// msm_chunk is the chunk of an MSM over F: the config's, or MsmChunk's.
template <class F> u32 msm_chunk(const MsmTuning &t) { return t.chunk ? t.chunk : MsmChunk<F>::value; }

// msm_tuning_of checks cfg's MSM fields (0 each: the default) into *t, or
// fails naming the field, its value and its range.
inline int msm_tuning_of(const zk_config &cfg, MsmTuning *t) {
    *t = MsmTuning{};
    if (cfg.msm_window != 0 && (cfg.msm_window < 4 || cfg.msm_window > MSM_MAX_WINDOW))
        return FAILF("config: msm_window %d: want 4 to %d bits, or 0 (by size)", cfg.msm_window, MSM_MAX_WINDOW);
    if (cfg.msm_chunk != 0 && (cfg.msm_chunk < 2 || cfg.msm_chunk > 256))
        return FAILF("config: msm_chunk %d: want 2 to 256 points, or 0 (by group)", cfg.msm_chunk);
    int sg = cfg.msm_segment;
    if (sg != 0 && (sg < 2 || sg > 256 || (sg & (sg - 1)) != 0))
        return FAILF("config: msm_segment %d: want a power of two from 2 to 256, or 0 (by size)", sg);
    int pl = cfg.msm_piece_log;
    if (pl != 0 && (pl < MSM_PIECE_LOG_MIN || pl > MSM_PIECE_LOG_MAX))
        return FAILF("config: msm_piece_log %d: want %d to %d, or 0 (%d)", pl, MSM_PIECE_LOG_MIN, MSM_PIECE_LOG_MAX,
                     MSM_PIECE_LOG);
    t->piece_log = pl;
    t->window = cfg.msm_window;
    t->chunk = (u32)cfg.msm_chunk;
    t->segment = (u32)sg;
    return 0;
}

// ContextConfig is a zk_config as a library context keeps it, checked.
//
// Waits (spin false): blocking sync's wake-up cost 0.2–0.4 ms a host wait
// on one H100 machine, two a G1 MSM (its 2^22 MSM 26.2 ms against 25.4
// spinning; notes/h100-2026-12-06g.md call 1). With poll_us > 0 an MSM's last
// wait sleeps in blocking sync through level 0 (CudaDev::mark) and looks
// every poll_us µs at the short rest (levelN and the bucket reduction,
// 0.7 ms or more), sleeping in between; its fullest-bucket read waits for
// its copy alone while level 0 runs. poll_us 0 is blocking sync
// throughout.
const int WAIT_POLL_US = 20, WAIT_POLL_US_MAX = 1000;
struct ContextConfig {
    MsmTuning msm;
    bool spin = false;
    int poll_us = WAIT_POLL_US;
};

// context_config_of checks *cfg (NULL: the defaults) into *out, or fails
// naming the field.
inline int context_config_of(const zk_config *cfg, ContextConfig *out) {
    *out = ContextConfig{};
    if (!cfg) return 0;
    if (cfg->config_bytes != sizeof(zk_config))
        return FAILF("config: %u bytes, this library's zk_config has %zu", cfg->config_bytes, sizeof(zk_config));
    TRY(msm_tuning_of(*cfg, &out->msm));
    if (cfg->spin != 0 && cfg->spin != 1) return FAILF("config: spin %d: want 0 (blocking sync) or 1", cfg->spin);
    out->spin = cfg->spin == 1;
    int pu = cfg->wait_poll_us;
    if (pu != 0 && pu != -1 && (pu < 1 || pu > WAIT_POLL_US_MAX))
        return FAILF("config: wait_poll_us %d: want 1 to %d µs, 0 (%d) or -1 (blocking sync)", pu, WAIT_POLL_US_MAX,
                     WAIT_POLL_US);
    out->poll_us = pu == 0 ? WAIT_POLL_US : pu == -1 ? 0 : pu;
    return 0;
}

// LEVEL0_PREFETCHES: whether level0 over F loads the next point before this
// one's addition (msm.cuh, level0_body's PF). G1 only: over Fp2 it spills
// (44 bytes) and G2 2^20 ran 12.4 ms without it against 12.9 with (run 1 of
// notes/h200-2026-12-01e.md); one body less is also a quarter less of the G2
// part's compile time. Over G1 it is 0.2–0.5 ms faster at 2^20–2^24.
//
// BLS12-381's G1 (48-byte limbs, twice BN254's registers a product) does
// not prefetch: its prefetching body spilled 388 bytes and ran 8.9 and 27.4 ms
// at 2^20 and 2^22 against 8.8 and 26.9 (H100, notes/h100-2026-12-06.md call 6;
// ZK_BLS_G1_PREFETCH, retired: notes/cuda-variants.md).
template <class F> constexpr bool LEVEL0_PREFETCHES = sizeof(F) == sizeof(Fp);
template <> constexpr bool LEVEL0_PREFETCHES<Bls12381Fp> = false;

// msm_segment: buckets a segment thread reduces, for half buckets a set:
// the knob if set, else base (MsmSegment's), widened past 2^18 buckets to
// keep about 2^15 segments a set (reduce_buckets' classes then sum about
// 2^15·log₂(2^15)/2 points: more segments cost more than their shorter
// chains save).
inline u32 msm_segment(u32 half, u32 knob, u32 base = 8) {
    u32 S = knob;
    if (!S) {
        S = base;
        while (S < 256 && half / S > (1u << 15)) S <<= 1;
    }
    return S < half ? S : half;
}

// MsmSegment<F>: msm_segment's base for an MSM over F. BLS12-381's G2
// takes 4: its segment kernel runs 2S − 1 additions of about 60 µs each
// (one warp a scheduler, 5 KB of spills), so halving S pays more than the
// bit classes' doubled work costs. H100, notes/h100-2026-12-06d.md calls 2 and
// 3, ZKPIPE_MSM_SEGMENT=4 against 8: its MSM 2^20 26.1 and 26.3 ms against
// 26.7 and 26.8; 26.9 and 27.0 against 27.2 and 27.3 on another H100 (2:
// 27.4 and 27.2). BLS12-381's G1 was level at 4 (8.6, 8.8 against 8.7,
// 8.6), BN254's G1 2^22 slower (13.1, 13.1 against 12.7, 12.6): they keep 8.
template <class F> struct MsmSegment {
    static constexpr u32 value = 8;
};
template <> struct MsmSegment<Bls12381Fp2> {
    static constexpr u32 value = 4;
};

// MSM_MAX_BATCH is the most scalar vectors one MSM run takes over the same
// bases (ZK_MAX_BATCH): cross-proof batching of a circuit's tail MSMs.
const int MSM_MAX_BATCH = ZK_MAX_BATCH;

// MsmPlan is one MSM run's sizes: k vectors of scalars over the same bases
// (k = 1: one MSM). Every count that can pass 2^31 is a size_t.
//
//	c, nw      window bits and windows (msm_window, msm_windows)
//	half       buckets a set (2^(c−1), signed digits)
//	nbv        buckets a vector: nw sets of half, or one set over a table
//	nb, bw     buckets and bucket sets in all: k·nbv and k·(nw or 1); vector
//	           j's keys are [j·nbv, (j+1)·nbv), the sentinel nb sorts last,
//	           and its sets' sums are [j·bw/k, (j+1)·bw/k)
//	ns[j]      vector j's scalars; n is the largest
//	at[j]      where vector j's digit slots start: n_j·nw of them, window
//	           w's at [at[j] + w·n_j, at[j] + (w+1)·n_j)
//	m          digit slots in all: Σ n_j·nw
//
// Sorts: the slots split into units whose keys no other unit has — one
// window of one vector, or over a table one whole vector (its windows share
// a set) — and consecutive units go to one radix sort while it takes at
// most SORT_MAX_ITEMS pairs, so a bucket's run is always whole.
//
// Limits: n < 2^31 (a digit's value is a base's index with the sign in bit
// 31) and m < 2^32 (a bucket's run starts at a 32-bit position of the
// sorted digits): with 16-bit windows (n ≥ 2^20) every n < 2^28 fits,
// n = 2^27 (m = 2^31, two sorts) among them; larger MSMs are refused (a
// batch is split into runs that fit: msm_run_batch).
struct MsmPlan {
    size_t n;
    int c, nw;
    int bw;    // bucket sets in all: k·nw, or k over a precomputed table
    u32 half, nb, nbv;
    size_t m;
    bool table;
    int k;
    size_t ns[MSM_MAX_BATCH], at[MSM_MAX_BATCH];

    size_t units() const { return table ? (size_t)k : (size_t)k * nw; }
    size_t unit_items(size_t u) const { return table ? ns[u] * nw : ns[u / nw]; }
    // each_sort calls f(off, items) for each radix sort, in slot order.
    template <class G> void each_sort(G f) const {
        size_t off = 0, items = 0;
        for (size_t u = 0; u < units(); u++) {
            size_t it = unit_items(u);
            if (items && items + it > SORT_MAX_ITEMS) {
                f(off, items);
                off += items;
                items = 0;
            }
            items += it;
        }
        if (items) f(off, items);
    }
    // sorts is how many radix sorts the digits take.
    int sorts() const {
        int r = 0;
        each_sort([&](size_t, size_t) { r++; });
        return r;
    }
    // sort s covers items slots from off.
    void sort_range(int s, size_t *off, size_t *items) const {
        int i = 0;
        each_sort([&](size_t o, size_t it) {
            if (i++ == s) *off = o, *items = it;
        });
    }
    // level_total is the chunk count after a level over prev items: at
    // most prev/L whole chunks plus one partial chunk a bucket.
    u32 chunk; // points a thread sums per level
    size_t level_total(size_t prev) const { return prev / chunk + nb; }
};

// msm_plan_batch fills p for k vectors of n[j] scalars (some may be 0, not
// all) in c-bit windows, nw of them, over the bases or a table, or fails
// naming the limit.
inline int msm_plan_batch(const size_t *n, int k, int c, int nw, bool table, u32 chunk, MsmPlan *p) {
    if (k < 1 || k > MSM_MAX_BATCH) return FAILF("msm: %d vectors in a batch, want 1 to %d", k, MSM_MAX_BATCH);
    if (nw > ZK_MAX_WINDOWS) return FAILF("msm: %d windows, the limit is %d", nw, ZK_MAX_WINDOWS);
    p->c = c;
    p->nw = nw;
    p->k = k;
    p->table = table;
    p->chunk = chunk;
    p->half = 1u << (c - 1);
    p->nbv = table ? p->half : (u32)nw * p->half;
    p->bw = k * (table ? 1 : nw);
    p->n = 0;
    p->m = 0;
    for (int j = 0; j < k; j++) {
        if (n[j] >= ((size_t)1 << 31)) return FAILF("msm: %zu points, the limit is 2^31 − 1", n[j]);
        if (table && n[j] * (size_t)nw > SORT_MAX_ITEMS)
            return FAILF("msm over a table: %zu scalars × %d windows = %zu digits, more than one sort takes (2^31 − 1)",
                         n[j], nw, n[j] * (size_t)nw);
        p->ns[j] = n[j];
        p->at[j] = p->m;
        p->m += n[j] * (size_t)nw;
        if (n[j] > p->n) p->n = n[j];
    }
    if (p->m == 0) return FAILF("msm: no points");
    if (p->m > 0xffffffffULL)
        return FAILF("msm: %zu points × %d windows = %zu digits, the limit is 2^32 − 1", p->n, nw, p->m);
    if ((uint64_t)k * p->nbv >= 0xffffffffULL)
        return FAILF("msm: %d vectors × %u buckets, more than 32-bit keys hold", k, p->nbv);
    p->nb = (u32)k * p->nbv;
    if (p->level_total(p->m) > 0xffffffffULL)
        return FAILF("msm: %zu chunks at the first level, more than 32-bit positions hold", p->level_total(p->m));
    return 0;
}

// msm_plan fills p for n points (n ≥ 1) as t plans them, or fails naming
// the limit.
template <class F = Fp> int msm_plan(size_t n, const MsmTuning &t, MsmPlan *p) {
    if (n == 0) return FAILF("msm: no points");
    if (n >= ((size_t)1 << 31)) return FAILF("msm: %zu points, the limit is 2^31 − 1", n);
    int c = msm_window(n, t.window);
    return msm_plan_batch(&n, 1, c, msm_windows<ScalarOf<F>>(c), false, msm_chunk<F>(t), p);
}

// MsmTable is a precomputed table (msm.cuh): nbase bases' multiples for
// c-bit windows, nw of them, at [w·nbase + i].
template <class F> struct MsmTable {
    const Affine<F> *pts;
    size_t nbase;
    int c, nw;
};

// TableWindows<F>: msm_table_window's choice for a table of F's points:
// wide (BLS12-381's groups: 20 bits from 2^19 bases) and, from 2^24 bases,
// from24 bits where not 0. BLS12-381's G1 takes 22 there: 12 windows
// instead of 20 bits' 13, 8% fewer additions for a set of 2^21 buckets
// instead of 2^19 (H100, notes/h100-2026-12-06f.md calls 2 and 3, as
// ZKPIPE_MSM_WINDOW=22: its MSM 2^24 90.8 and 90.9 ms against 93.1 to 93.5).
// G2 keeps 20: its 2^21 buckets' reduction (full additions over Fp2, the
// slowest kernels) was not measured.
template <class F> struct TableWindows {
    static constexpr bool wide = false;
    static constexpr int from24 = 0;
};
template <> struct TableWindows<Bls12381Fp> {
    static constexpr bool wide = true;
    static constexpr int from24 = 22;
};
template <> struct TableWindows<Bls12381Fp2> {
    static constexpr bool wide = true;
    static constexpr int from24 = 0;
};
template <class F> int group_table_window(size_t nbase, int override) {
    return msm_table_window(nbase, override, TableWindows<F>::wide, TableWindows<F>::from24);
}

// msm_table_layout gives the window and windows of a table of nbase points
// of F's group (group_table_window, or t's window), or fails if the table
// cannot be addressed: every point's index must fit in 31 bits.
template <class F = Fp> int msm_table_layout(size_t nbase, const MsmTuning &t, int *c, int *nw) {
    if (nbase == 0) return FAILF("msm table: no bases");
    *c = group_table_window<F>(nbase, t.window);
    *nw = msm_windows<ScalarOf<F>>(*c);
    if (*nw > ZK_MAX_WINDOWS) return FAILF("msm table: %d windows, the limit is %d", *nw, ZK_MAX_WINDOWS);
    if ((size_t)*nw * nbase >= ((size_t)1 << 31))
        return FAILF("msm table: %d windows × %zu bases is 2^31 points or more", *nw, nbase);
    return 0;
}

// msm_table_layout_raw is zk_msm_table_layout's: msm_table_layout into
// the ABI's integers.
template <class F> int msm_table_layout_raw(const MsmTuning &t, uint64_t nbase, int32_t *c, int32_t *nw) {
    int ci = 0, nwi = 0;
    TRY(msm_table_layout<F>(nbase, t, &ci, &nwi));
    *c = ci;
    *nw = nwi;
    return 0;
}

// msm_plan_table fills p for n scalars over a table: one set of buckets,
// all windows' digits in one sort (so a bucket's run is whole).
inline int msm_plan_table(size_t n, int c, int nw, u32 chunk, MsmPlan *p) {
    if (n == 0) return FAILF("msm: no points");
    return msm_plan_batch(&n, 1, c, nw, true, chunk, p);
}

// msm_precompute builds a table's points from the bases.
template <class F, class D> int msm_precompute(D &d, const Affine<F> *bases, const MsmTable<F> &t, Affine<F> *table) {
    TRY(d.template precompute<F>(bases, t.nbase, t.c, t.nw, table));
    TRY(d.sync());
    return 0;
}

// msm_precompute_raw is the C API's zk_precompute_* over untyped device
// pointers: the layout from nbase (and tu's window), then msm_precompute.
template <class F, class D>
int msm_precompute_raw(D &d, const MsmTuning &tu, const void *bases, uint64_t nbase, void *table) {
    MsmTable<F> t{(const Affine<F> *)table, nbase, 0, 0};
    TRY(msm_table_layout<F>(nbase, tu, &t.c, &t.nw));
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

// HOST_COMBINE_SETS: a run of at most this many bucket sets (an MSM over a
// table: one set a vector) takes step 3 of the bucket reduction (msm.cuh,
// combine_bits) on the host: its chain of about 2·log₂half dependent
// additions runs faster on a host core than on one GPU thread (a few µs an
// addition against up to 50). More sets are weighed on the device, a
// thread a class sum, and each set's sums reduced there.
const u32 HOST_COMBINE_SETS = 2;
const u32 MAX_BIT_CLASSES = 32; // bit_classes of any set (half ≤ 2^23: at most 24)

// reduce_buckets: each of the sets' weighted sums Σ (q+1)·B_q over its
// half buckets (bucket sums P through start, cnt), into host_out[set],
// returned once written: segments of S buckets, their bit classes, the
// classes' sums, and combine_bits' Horner on the host or weigh_body's
// doublings on the device (msm.cuh's bucket reduction).
template <class F, class D>
int reduce_buckets(D &d, const XYZZ<F> *P, const u32 *start, const u32 *cnt, u32 sets, u32 half, u32 S,
                   XYZZ<F> *host_out, Scratch<D> &sc) {
    const u32 spw = half / S, nseg = sets * spw, K = bit_classes(spw);
    if (K > MAX_BIT_CLASSES) return FAILF("msm: %u segments a set, more than %u bit classes", spw, MAX_BIT_CLASSES);
    int lgS = 0;
    while ((1u << lgS) < S) lgS++;
    const u32 per = bitsum_per(spw, K, sets), parts = spw / per; // powers of two
    const size_t nparts = (size_t)sets * K * parts, nsums = (size_t)sets * K;
    XYZZ<F> *acc, *run, *part, *sums;
    TRY(sc.get(&acc, nseg));
    TRY(sc.get(&run, nseg));
    TRY(d.template segment<F>(P, start, cnt, half, S, nseg, acc, run));
    TRY(sc.get(&part, nparts));
    TRY(d.template bitsum<F>(acc, run, spw, K, parts, per, part, nparts));
    sc.drop(acc);
    sc.drop(run);
    TRY(sc.get(&sums, nsums));
    TRY(d.template reduce<F>(part, nparts, parts, sums, nsums));
    sc.drop(part);
    if (sets <= HOST_COMBINE_SETS) {
        XYZZ<F> h[HOST_COMBINE_SETS * MAX_BIT_CLASSES];
        TRY(d.to_host(h, sums, nsums * sizeof(XYZZ<F>)));
        TRY(d.sync());
        for (u32 s = 0; s < sets; s++) host_out[s] = combine_bits(h + (size_t)s * K, K, lgS);
        return 0;
    }
    XYZZ<F> *weighed, *win;
    TRY(sc.get(&weighed, nsums));
    TRY(sc.get(&win, sets));
    TRY(d.template weigh<F>(sums, (u32)nsums, K, lgS, weighed));
    TRY(d.template reduce<F>(weighed, nsums, K, win, sets));
    TRY(d.to_host(host_out, win, sets * sizeof(XYZZ<F>)));
    TRY(d.sync());
    return 0;
}

// scan_offsets allocates *off and fills it with the exclusive sum of the nb
// counts: where each bucket's first item of the next level goes.
template <class D> int scan_offsets(D &d, Scratch<D> &sc, const u32 *counts, u32 nb, u32 **off) {
    TRY(sc.get(off, nb));
    size_t sb = 0;
    TRY(d.exclusive_sum(nullptr, &sb, counts, *off, nb));
    void *st = nullptr;
    TRY(sc.get((char **)&st, sb));
    TRY(d.exclusive_sum(st, &sb, counts, *off, nb));
    sc.drop(st);
    return 0;
}

// chunk_runs: the next level's runs, *chunks[b] = ⌈cnt[b]/L⌉ items of bucket
// b from *off[b] (both allocated here).
template <class D> int chunk_runs(D &d, Scratch<D> &sc, const u32 *cnt, u32 nb, u32 L, u32 **chunks, u32 **off) {
    TRY(sc.get(chunks, nb));
    TRY(d.chunks(cnt, nb, L, *chunks));
    return scan_offsets(d, sc, *chunks, nb, off);
}

// msm_plan_bytes bounds the device bytes one MSM run over F holds at once
// for m = n·nw digits into nb buckets, phase by phase, with L the chunk and
// T₀ = m/L + nb, T₁ = T₀/L + nb the sums of the XYZZ levels:
//
//	sort      keys, values and their sorted copies (16m), CUB's scratch at
//	          most the alternate buffers of the largest sort (8m)
//	level 0   the sorted values (4m), bucket runs and chunks (16·nb), T₀ sums
//	level ≥1  the same with the previous level's sums: (T₀ + T₁) sums
//	reduce    the last level's sums, runs and 2·nb points (reduce_buckets)
template <class F> size_t msm_plan_bytes(size_t n, int nw, size_t nb, size_t L) {
    size_t m = n * (size_t)nw, xyzz = sizeof(XYZZ<F>);
    size_t t0 = m / L + nb, t1 = t0 / L + nb;
    size_t most = 24 * m, levels = 4 * m + 16 * nb + (t0 + t1) * xyzz;
    // reduce_buckets: the last level's sums and runs with, at most, the
    // segment sums (2·nb/S ≤ nb points) and their classes' parts (fewer),
    // or the classes' sums, weighed sums and set sums (2K + 1 ≤ 2·half a set)
    size_t last = t0 > t1 ? t0 : t1, reduce = 16 * nb + (last + 2 * nb) * xyzz;
    if (reduce > most) most = reduce;
    return most > levels ? most : levels;
}

// msm_scratch_bytes bounds the device bytes msm_run_batch over F holds at
// once for n scalars: over plain bases (nw sets of buckets), or over a
// table of n bases (fewer digits and one set of buckets, but a wider
// window's set can be the larger: BLS12-381's 20 bits from 2^19 bases,
// its G1's 22 from 2^24).
// gpu.CUDA.JobBytes reserves it (zk_msm_scratch_bytes) for the governor.
// A run holds at most a piece's scalars (msm_piece), in the windows the
// whole MSM's size chose.
template <class F> size_t msm_scratch_bytes(size_t n, const MsmTuning &t) {
    if (n == 0) return 0;
    typedef ScalarOf<F> S;
    const size_t run = n < msm_piece(t) ? n : msm_piece(t);
    int c = msm_window(n, t.window), nw = msm_windows<S>(c);
    size_t plain = msm_plan_bytes<F>(run, nw, (size_t)nw << (c - 1), msm_chunk<F>(t));
    int ct = group_table_window<F>(n, t.window);
    size_t table = msm_plan_bytes<F>(run, msm_windows<S>(ct), (size_t)1 << (ct - 1), msm_chunk<F>(t));
    return plain > table ? plain : table;
}

// msm_core: the window sums of the k = pl.k MSMs Σ scalars[j][i]·bases[idx[j] ?
// idx[j][i] : i], i < pl.ns[j], in one run over the same bases: vector j's
// nw (or, over a table, 1) sums at host_out[j·pl.bw/k …], the caller
// combines the windows. Every vector has bucket sets of its own, so one
// digits launch a vector, one sort of all the digits, and one launch of
// each level, segment and reduce step serve them all.
//
//  1. digits: signed c-bit digits of every scalar, keyed by bucket
//  2. sort the (bucket, point) pairs by bucket, in units whose keys no
//     other unit has (MsmPlan)
//  3. runs: each bucket's run in the sorted pairs
//  4. levels: sum the sorted points in tiles of L0 (pl.chunk or wider:
//     level0_chunk; a partial sum for each bucket a tile meets), then each
//     bucket's partials in chunks of up to pl.chunk, until every bucket is
//     one point
//  5. each set's Σ (q+1)·B_q (reduce_buckets): segments of S buckets,
//     their bit classes' sums, combined on the host or the device
//
// Over a table (tab non-null; bases unused), the digits of every window of
// a vector key one set of buckets and read the table's points directly.
template <class F, class D>
int msm_core(D &d, const Affine<F> *bases, const ScalarOf<F> *const *scalars, const u32 *const *idx, MsmPlan &pl,
             u32 L0, u32 segment, XYZZ<F> *host_out, const MsmTable<F> *tab) {
    const size_t m = pl.m;
    const u32 nb = pl.nb, half = pl.half;
    Scratch<D> sc(d);

    u32 *keys, *vals, *keys2, *vals2;
    TRY(sc.get(&keys, m));
    TRY(sc.get(&vals, m));
    TRY(sc.get(&keys2, m));
    TRY(sc.get(&vals2, m));
    for (int j = 0; j < pl.k; j++) {
        if (!pl.ns[j]) continue; // an empty vector: its sets stay empty, its sums ∞
        const u32 *ix = idx ? idx[j] : nullptr;
        u32 key0 = (u32)j * pl.nbv;
        if (tab)
            TRY(d.digits_table(scalars[j], ix, pl.ns[j], tab->nbase, pl.c, pl.nw, key0, nb, keys + pl.at[j],
                               vals + pl.at[j]));
        else
            TRY(d.digits(scalars[j], ix, pl.ns[j], pl.c, pl.nw, key0, nb, keys + pl.at[j], vals + pl.at[j]));
    }
    if (tab) bases = tab->pts; // the values index the table
    const u32 *idx0 = nullptr; // the digits resolved the indexes
    int end_bit = bitlen(nb); // the sentinel nb sorts last
    size_t tmp_bytes = 0, most = 0;
    pl.each_sort([&](size_t, size_t items) { most = items > most ? items : most; });
    TRY(d.sort_pairs(nullptr, &tmp_bytes, keys, keys2, vals, vals2, most, end_bit));
    void *tmp = nullptr;
    TRY(sc.get((char **)&tmp, tmp_bytes));
    int rc = 0;
    pl.each_sort([&](size_t off, size_t items) {
        if (rc == 0) rc = d.sort_pairs(tmp, &tmp_bytes, keys + off, keys2 + off, vals + off, vals2 + off, items, end_bit);
    });
    TRY(rc);
    sc.drop(tmp);
    sc.drop(keys);
    sc.drop(vals);

    u32 *start, *cnt;
    TRY(sc.get(&start, nb));
    TRY(sc.get(&cnt, nb));
    TRY(d.runs(keys2, m, nb, start, cnt));

    // Levels: as many as the fullest bucket needs, read back from the
    // device (a bucket can hold n points, m over a table, but random
    // scalars put about m/nb in each: 2 levels where the bound takes 5,
    // and every level launches a thread a bucket).
    // The count is read while level 0 runs (to_host_early): a host wait
    // before level 0 is queued left the GPU idle for the host's wake-up and
    // the next launches (that order, ZK_MSM_EARLY_BOUND=0, measured level on
    // the H100 and is retired: notes/cuda-variants.md).
    size_t bound = 0, prev_total = m;
    u32 most_h = 0;
    {
        u32 *most;
        TRY(sc.get(&most, 1));
        size_t mb = 0;
        TRY(d.max_of(nullptr, &mb, cnt, most, nb));
        void *mt = nullptr;
        TRY(sc.get((char **)&mt, mb));
        TRY(d.max_of(mt, &mb, cnt, most, nb));
        TRY(d.to_host_early(&most_h, most, sizeof most_h)); // read while level 0 runs
        sc.drop(mt);
        sc.drop(most);
    }
    const u32 L = pl.chunk; // L0 at level 0
    if (L0 < L) return FAILF("msm: level 0's tiles of %u points, fewer than the plan's %u", L0, L);
    XYZZ<F> *P = nullptr;
    // next_runs: a level is done; its items' runs (off, counts) and bound
    // on their number become the next level's input runs.
    auto next_runs = [&](u32 *off, u32 *counts, size_t total) {
        sc.drop(start);
        sc.drop(cnt);
        start = off;
        cnt = counts;
        prev_total = total;
    };
    {
        // Level 0 sums tiles of L0 sorted points (msm.cuh, tiles_body): a
        // run of h points meets at most ⌈(h − 1)/L0⌉ + 1 tiles.
        u32 *chunks, *off;
        TRY(sc.get(&chunks, nb));
        TRY(d.tiles(start, cnt, nb, L0, chunks));
        TRY(scan_offsets(d, sc, chunks, nb, &off));
        size_t total = m / L0 + nb; // level_total(m) or fewer: L0 ≥ L
        TRY(sc.get(&P, total));
        TRY(d.template level0<F>(bases, idx0, keys2, vals2, m, nb, start, off, L0, P));
        sc.drop(keys2);
        sc.drop(vals2);
        next_runs(off, chunks, total);
        TRY(d.mark());
        TRY(d.copied());
        bound = most_h > 1 ? (most_h - 2) / L0 + 2 : most_h;
    }
    // Later levels sum each bucket's partial sums in chunks of up to L.
    while (bound > 1) {
        u32 *chunks, *off;
        TRY(chunk_runs(d, sc, cnt, nb, L, &chunks, &off));
        size_t total = pl.level_total(prev_total);
        XYZZ<F> *Q;
        TRY(sc.get(&Q, total));
        TRY(d.template levelN<F>(P, start, cnt, off, chunks, nb, L, (u32)total, Q));
        sc.drop(P);
        P = Q;
        next_runs(off, chunks, total);
        bound = (bound + L - 1) / L;
    }

    return reduce_buckets<F>(d, P, start, cnt, (u32)pl.bw, half, msm_segment(half, segment, MsmSegment<F>::value),
                             host_out, sc);
}

// msm_run_batch: the window sums of k MSMs over the same bases (or table),
// vector j's scalars[j][i < n[j]] through idx[j] (idx or idx[j] null:
// dense), into host_out[j·nw + w] (room for k·ZK_MAX_WINDOWS points):
// *c_out bits a window, *nw_out windows a vector (1 over a table; 0 when
// every vector is empty, and nothing written). One window size for all
// (by the largest vector, or the table's). Runs hold at most a piece's
// scalars (msm_piece) and what one run's digits can (MsmPlan): consecutive
// vectors share a run while both allow, and a vector longer than a piece
// runs alone, a piece at a time, each piece's window sums added to the
// vector's (the windows are the whole vector's, so the sums add).
template <class F, class D>
int msm_run_batch(D &d, const MsmTuning &t, const Affine<F> *bases, const ScalarOf<F> *const *scalars, const u32 *const *idx,
                  const size_t *n, int k, XYZZ<F> *host_out, int *c_out, int *nw_out, const MsmTable<F> *tab = nullptr) {
    *c_out = 0;
    *nw_out = 0;
    if (k < 0 || k > MSM_MAX_BATCH) return FAILF("msm: %d vectors in a batch, want 1 to %d", k, MSM_MAX_BATCH);
    size_t most = 0;
    for (int j = 0; j < k; j++) most = n[j] > most ? n[j] : most;
    if (most == 0) return 0;
    if (most >= ((size_t)1 << 31)) return FAILF("msm: %zu points, the limit is 2^31 − 1", most);
    int c = tab ? tab->c : msm_window(most, t.window);
    int nw = tab ? tab->nw : msm_windows<ScalarOf<F>>(c);
    int per = tab ? 1 : nw; // sums a vector
    const size_t piece = msm_piece(t);
    MsmPlan pl{};
    // run: the MSMs of vectors [0, kr) of sc/ix (n ns) over b or tb into out
    auto run = [&](const Affine<F> *b, const ScalarOf<F> *const *sc, const u32 *const *ix, const size_t *ns, int kr,
                   XYZZ<F> *out, const MsmTable<F> *tb) -> int {
        TRY(msm_plan_batch(ns, kr, c, nw, tb != nullptr, msm_chunk<F>(t), &pl));
        // a configured chunk is every level's; the group's may widen at
        // level 0 (level0_chunk)
        u32 L0 = pl.chunk;
        if constexpr (Level0Widens<F>::value)
            if (!t.chunk) L0 = level0_chunk(pl.m, pl.chunk, d.template level0_slots<F>());
        return msm_core<F>(d, b, sc, ix, pl, L0, t.segment, out, tb);
    };
    for (int j0 = 0; j0 < k;) {
        if (n[j0] > piece) {
            // Piece by piece. A dense piece reads the bases (or the table's
            // points, at w·nbase + i) from lo on; a sparse one reads them
            // through its indexes, which are absolute.
            XYZZ<F> *out = host_out + (size_t)j0 * per;
            for (size_t lo = 0; lo < n[j0]; lo += piece) {
                size_t m = n[j0] - lo < piece ? n[j0] - lo : piece;
                const ScalarOf<F> *sc = scalars[j0] + lo;
                const u32 *ix = idx && idx[j0] ? idx[j0] + lo : nullptr;
                const Affine<F> *b = bases;
                MsmTable<F> tp{};
                if (tab) {
                    tp = *tab;
                    if (!ix) tp.pts += lo;
                } else if (!ix) {
                    b += lo;
                }
                XYZZ<F> part[ZK_MAX_WINDOWS];
                TRY(run(b, &sc, ix ? &ix : nullptr, &m, 1, lo == 0 ? out : part, tab ? &tp : nullptr));
                if (lo > 0)
                    for (int w = 0; w < per; w++) out[w].add(part[w]);
            }
            j0++;
            continue;
        }
        // the longest run of vectors from j0 whose digits one run holds,
        // within a piece's scalars
        int j1 = j0 + 1;
        size_t m = n[j0] * (size_t)nw, sum = n[j0];
        while (j1 < k && sum + n[j1] <= piece && m + n[j1] * (size_t)nw <= 0xffffffffULL) {
            m += n[j1] * (size_t)nw;
            sum += n[j1++];
        }
        if (sum) {
            TRY(run(bases, scalars + j0, idx ? idx + j0 : nullptr, n + j0, j1 - j0, host_out + (size_t)j0 * per, tab));
        } else {
            for (int j = j0 * per; j < j1 * per; j++) host_out[j] = XYZZ<F>::inf();
        }
        j0 = j1;
    }
    *c_out = c;
    *nw_out = per;
    return 0;
}

// msm_raw is the C API's zk_msm over untyped pointers (zkpipe.h,
// zk_msm_args): a.k vectors over a.bases, or over the table of a.nbase
// bases laid out as msm_table_layout says, in one msm_run_batch. F is the
// group's base field, which the caller picked by a.g2.
template <class F, class D>
int msm_raw(D &d, const MsmTuning &t, const zk_msm_args &a, void *out, int32_t *c, int32_t *nw) {
    if (a.k < 1 || a.k > (uint32_t)MSM_MAX_BATCH)
        return FAILF("msm: %u vectors in a batch, want 1 to %d", a.k, MSM_MAX_BATCH);
    if (!a.scalars || !a.n) return FAILF("msm: no scalars or counts");
    MsmTable<F> tab{(const Affine<F> *)a.bases, a.nbase, 0, 0};
    if (a.table) TRY(msm_table_layout<F>(a.nbase, t, &tab.c, &tab.nw));
    size_t ns[MSM_MAX_BATCH];
    for (uint32_t j = 0; j < a.k; j++) ns[j] = a.n[j];
    int ci = 0, nwi = 0;
    TRY(msm_run_batch<F>(d, t, a.table ? nullptr : (const Affine<F> *)a.bases, (const ScalarOf<F> *const *)a.scalars, a.idx, ns,
                         (int)a.k, (XYZZ<F> *)out, &ci, &nwi, a.table ? &tab : nullptr));
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

// ─── fixed-base products ────────────────────────────────────────────────────

// FIXED_BASE_CHUNK: the scalars one pass of fixed_base_run takes, so that
// its device memory is bounded whatever n (at 2^22: 128 MiB of scalars,
// their XYZZ sums and affine points, 1.5 GiB and 768 MiB over BLS12-381's G2).
// The stand-in (hostlib.cpp) builds with chunks of 64, so that its tests
// run the loop over several chunks and a short last one.
#ifndef ZK_FIXED_BASE_CHUNK
#define ZK_FIXED_BASE_CHUNK ((size_t)1 << 22)
#endif
const size_t FIXED_BASE_CHUNK = ZK_FIXED_BASE_CHUNK;
static_assert(FIXED_BASE_CHUNK >= 1 && FIXED_BASE_CHUNK <= ((size_t)1 << 22),
              "ZK_FIXED_BASE_CHUNK: 1 to 2^22 scalars a pass (2^22: the production build's)");

// fixed_base_run: out[i] = scalars[i]·base for i < n, every pointer host
// memory (base one affine point, scalars Montgomery Fr, out affine, (0, 0)
// for infinity); c is the window (0: fixed_base_window's). The table is
// built on the device, then each chunk of scalars goes up, is multiplied,
// made affine and comes back. Returns when out is written.
template <class F, class D>
int fixed_base_run(D &d, int c, const Affine<F> *base, const ScalarOf<F> *scalars, size_t n, Affine<F> *out) {
    typedef ScalarOf<F> S;
    if (n == 0) return 0;
    if (!base || !scalars || !out) return FAILF("fixed base: no base, scalars or output");
    if (c == 0) c = fixed_base_window<S>(n);
    if (c < 2 || c > 20) return FAILF("fixed base: window of %d bits, want 2 to 20 (0: by size)", c);
    if (base->is_inf()) { // every product is infinity
        memset((void *)out, 0, n * sizeof(Affine<F>));
        return 0;
    }
    const int nw = msm_windows<S>(c);
    const size_t entries = (size_t)nw << (c - 1);
    Scratch<D> sc(d);
    Affine<F> *dbase, *table, *aff;
    XYZZ<F> *pw, *acc;
    S *ds;
    const size_t chunk = n < FIXED_BASE_CHUNK ? n : FIXED_BASE_CHUNK;
    TRY(sc.get(&dbase, 1));
    TRY(sc.get(&pw, (size_t)nw));
    TRY(sc.get(&table, entries));
    TRY(sc.get(&ds, chunk));
    TRY(sc.get(&acc, chunk));
    TRY(sc.get(&aff, chunk));
    TRY(d.to_dev(dbase, base, sizeof(Affine<F>)));
    TRY(d.template fb_powers<F>(dbase, c, nw, pw));
    TRY(d.template fb_table<F>(pw, c, entries, table));
    for (size_t off = 0; off < n; off += chunk) {
        size_t m = n - off < chunk ? n - off : chunk;
        size_t g = (m + FB_INV_BATCH - 1) / FB_INV_BATCH;
        TRY(d.to_dev(ds, scalars + off, m * sizeof(S)));
        TRY(d.template fb_mul<F>(ds, m, table, c, nw, acc));
        TRY(d.template fb_affine<F>(acc, m, g, aff));
        TRY(d.to_host(out + off, aff, m * sizeof(Affine<F>)));
        TRY(d.sync());
    }
    return 0;
}

// ─── NTT ────────────────────────────────────────────────────────────────────

const int NTT_PASS = 8;          // stages a pass (k_ntt_pass)
const u32 NTT_PASS_THREADS = 512; // threads a pass block

// ntt_passes runs an NTT as passes of up to NTT_PASS stages (see
// group_pos): DIF from the top stage down, or DIT from the bottom up.
template <class S, class D> int ntt_passes(D &d, S *x, int logn, const S *tw, bool difp) {
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

// The NTT: passes of radix-8 rounds (k_ntt_regs) from eight elements up,
// passes of radix-2 stages in shared memory (k_ntt_pass) below. Its plan is
// fixed at build time: at most NTT_STAGES stages a pass in blocks of
// 2^NTT_LGBLOCK elements (-DZK_NTT_STAGES=…, -DZK_NTT_LGBLOCK=… to measure
// others). 8 stages in blocks of 1024 won the H200's grid at every size from
// 2^20 (notes/cuda.md: 2^24 in 4.64 ms against 5.39 for 12 stages in 4096,
// three DRAM passes whose blocks overlap beating two that cannot). The
// variants measured against this NTT, and where git still has them:
// notes/cuda-variants.md.
#ifndef ZK_NTT_STAGES
#define ZK_NTT_STAGES 8
#endif
#ifndef ZK_NTT_LGBLOCK
#define ZK_NTT_LGBLOCK 10
#endif
const int NTT_STAGES = ZK_NTT_STAGES;
const int NTT_LGBLOCK = ZK_NTT_LGBLOCK;
// NTT_REGS_THREADS: k_ntt_regs's launch bound (kernels.cuh); a block of
// 2^NTT_LGBLOCK elements takes 2^(NTT_LGBLOCK − 3) threads.
const u32 NTT_REGS_THREADS = 128;
static_assert(NTT_STAGES >= 3 && NTT_STAGES <= NTT_LGBLOCK, "ZK_NTT_STAGES: 3 to ZK_NTT_LGBLOCK");
static_assert((1u << (NTT_LGBLOCK - 3)) <= NTT_REGS_THREADS, "ZK_NTT_LGBLOCK: k_ntt_regs takes at most 128 threads a block");

// ntt_regs runs an NTT as regs_plan's passes of radix-8 rounds. A DIF's
// last pass (mlow = 1) multiplies by scale (null: none) in bit-reversed
// order on its way out, which saves scale_rev's pass over memory. The last
// pass is told so (`last`): with lazy reduction it writes canonical
// elements, the passes before it elements below 2q.
template <class S, class D> int ntt_regs(D &d, S *x, int logn, const S *tw, bool difp, const S *scale) {
    RegsPass ps[10];
    int np = regs_plan(logn, NTT_STAGES, NTT_LGBLOCK, difp, ps);
    for (int p = 0; p < np; p++) {
        const bool last = p == np - 1;
        TRY(d.ntt_regs(x, logn, ps[p].lgm, ps[p].s, ps[p].lgG, tw, difp, difp && last ? scale : nullptr, last));
    }
    return 0;
}

// dif: natural → bit-reversed order, then (scale non-null) position p
// multiplied by scale[bitrev(p)]; dit: bit-reversed → natural. The regs
// kernels need eight elements: smaller NTTs take the passes.
template <class S, class D> int dif(D &d, S *x, int logn, const S *tw, const S *scale = nullptr) {
    if (logn >= 3) return ntt_regs<S>(d, x, logn, tw, true, scale);
    TRY(ntt_passes(d, x, logn, tw, true));
    if (scale) TRY(d.scale_rev(x, 1u << logn, logn, scale));
    return 0;
}

template <class S, class D> int dit(D &d, S *x, int logn, const S *tw) {
    if (logn >= 3) return ntt_regs<S>(d, x, logn, tw, false, nullptr);
    return ntt_passes(d, x, logn, tw, false);
}

// domain_tables_run: see zk_domain_tables. The coset tables gn and ginvn
// are two-level (ntt.cuh, coset_at): g^jl for jl < 2^h, then
// g^(jh·2^h)/n, the second level's base g^(2^h) squared up on the host.
template <class S, class D> int domain_tables_run(D &d, S *tw, S *twinv, S *gn, S *ginvn, int logn, const S *k) {
    if (logn < 0 || logn > 30) return FAILF("domain: 2^%d elements, the limit is 2^30", logn);
    size_t n = (size_t)1 << logn, h = n / 2;
    if (h) {
        TRY(d.powers(tw, h, k[0], k[5]));
        TRY(d.powers(twinv, h, k[1], k[5]));
    }
    const int sp = coset_split(logn);
    const size_t lo = (size_t)1 << sp, hi = (size_t)1 << (logn - sp);
    S *tabs[2] = {gn, ginvn};
    for (int i = 0; i < 2; i++) {
        S g = k[2 + i], step = g;
        for (int b = 0; b < sp; b++) step = step.sqr();
        TRY(d.powers(tabs[i], lo, g, k[5]));
        TRY(d.powers(tabs[i] + lo, hi, step, k[4]));
    }
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
template <class S, class D>
int compute_h_run(D &d, D *side0, D *side1, S *a, S *b, S *c, int logn, const S *tw, const S *twinv,
                  const S *gn, const S *ginvn, int conv, S zinv) {
    if (logn < 0 || logn > 30) return FAILF("compute h: 2^%d elements, the limit is 2^30", logn);
    if (conv != 0 && conv != 1) return FAILF("compute h: unknown convention %d", conv);
    u32 n = 1u << logn;
    S *x[3] = {a, b, c};
    D *on[3] = {&d, side0 ? side0 : &d, side1 ? side1 : &d};
    for (int i = 1; i < 3; i++)
        if (on[i] != &d) TRY(on[i]->after(d)); // fork: after whatever d did to b, c
    for (int i = 0; i < 3; i++) {
        TRY(dif(*on[i], x[i], logn, twinv, gn));
        TRY(dit(*on[i], x[i], logn, tw));
    }
    for (int i = 1; i < 3; i++)
        if (on[i] != &d) TRY(d.after(*on[i])); // join: the pointwise step reads all three
    TRY(d.pointwise(x[0], x[1], x[2], n, zinv, conv == 0));
    if (conv == 0) {
        TRY(dif(d, x[0], logn, twinv, ginvn));
    }
    return 0;
}
