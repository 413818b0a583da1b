// fieldbench.cu — the field arithmetic's throughput on the GPU, against the
// issue's model of the chip (a 254-bit Montgomery product ≈ 264 32-bit
// multiply-adds; 64 a clock per SM → about 63·10⁹ products/s on an H200),
// and a device-side check of the 32-bit chains against the 64-bit reference,
// for BN254's fields and BLS12-381's (a 381-bit product ≈ (12/8)² = 2.25
// BN254 products: its rows count each as 2.25 against the same model).
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a fieldbench.cu -o fieldbench
//   ./fieldbench            (add -DZK_FIELD_MUL=64 to build the curve and Fp2
//                            rows on the first, 64-bit product)
// bench/h200-session.sh's `fieldbench` step builds and runs both.
#include "zk.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <random>
#include <vector>

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                               \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

// SQRMUL: the square as mul32(x, x) (what BLS12-381's Fp squared with
// before sqr32_n); SQRN: sqr32_n's rows (the generic square, any even N32);
// MULLAZY, SQRLAZY: without the final subtraction (values stay < 2q).
enum Op { MUL64, MUL32, SQR64, SQR32, ADD32, ADD64, SQRMUL, SQRN, MULLAZY, SQRLAZY };

template <class F, int OP> __device__ __forceinline__ F apply(const F &x, const F &y) {
    if constexpr (OP == MUL64) return F::mul64(x, y);
    else if constexpr (OP == MUL32) return F::mul32(x, y);
    else if constexpr (OP == SQR64) return F::mul64(x, x);
    else if constexpr (OP == SQR32) return F::sqr32(x);
    else if constexpr (OP == ADD64) return F::add64(x, y);
    else if constexpr (OP == SQRMUL) return F::mul32(x, x);
    else if constexpr (OP == SQRN) return F::join(F::sqr32_n_raw(x));
    else if constexpr (OP == MULLAZY) return F::mul_lazy(x, y);
    else if constexpr (OP == SQRLAZY) return F::sqr_lazy(x);
    else return F::add32(x, y);
}

// Three independent chains a thread, so the scheduler has work while a
// chain's product is in flight.
template <class F, int OP> __global__ void k_chain(const F *in, F *out, int iters) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    F x0 = in[4 * i], x1 = in[4 * i + 1], x2 = in[4 * i + 2], y = in[4 * i + 3];
    for (int k = 0; k < iters; k++) {
        x0 = apply<F, OP>(x0, y);
        x1 = apply<F, OP>(x1, y);
        x2 = apply<F, OP>(x2, y);
    }
    out[i] = F::add64(F::add64(x0, x1), x2);
}

template <class E, bool DOT> __device__ __forceinline__ E fp2mul(const E &a, const E &b) {
    return DOT ? E::mul_dot(a, b) : E::mul_karatsuba(a, b);
}

template <class E, bool DOT> __global__ void k_fp2(const E *in, E *out, int iters) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    E x0 = in[4 * i], x1 = in[4 * i + 1], x2 = in[4 * i + 2], y = in[4 * i + 3];
    for (int k = 0; k < iters; k++) {
        x0 = fp2mul<E, DOT>(x0, y);
        x1 = fp2mul<E, DOT>(x1, y);
        x2 = fp2mul<E, DOT>(x2, y);
    }
    out[i] = x0 + x1 + x2;
}

// mixed additions (madd-2008-s: 8 products and 2 squares each) into an XYZZ
// accumulator; the "points" are random field elements: the formulas cost
// the same on or off the curve.
template <class F> __global__ void k_madd(const F *in, F *out, int iters) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    F px = in[4 * i], py = in[4 * i + 1];
    XYZZ<F> acc;
    acc.X = in[4 * i + 2];
    acc.Y = in[4 * i + 3];
    acc.ZZ = field_one<F>();
    acc.ZZZ = field_one<F>();
    F one = field_one<F>();
    for (int k = 0; k < iters; k++) acc.add_affine(px, py, one);
    out[i] = acc.X + acc.ZZZ;
}

// k_madd_form: k_madd on the canonical formula (add_affine_eager) or the
// lazy one (add_affine_lazy), which BLS12-381's G1 runs (curve.cuh LazyCurve).
template <class F, bool LAZY> __global__ void k_madd_form(const F *in, F *out, int iters) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    F px = in[4 * i], py = in[4 * i + 1];
    XYZZ<F> acc;
    acc.X = in[4 * i + 2];
    acc.Y = in[4 * i + 3];
    acc.ZZ = field_one<F>();
    acc.ZZZ = field_one<F>();
    F one = field_one<F>();
    for (int k = 0; k < iters; k++) {
        if constexpr (LAZY) acc.add_affine_lazy(px, py, one);
        else acc.add_affine_eager(px, py, one);
    }
    out[i] = acc.X + acc.ZZZ;
}

// k_check: out[i] = 1 where a 32-bit result differs from the reference.
template <class F> __global__ void k_check(const F *a, const F *b, size_t n, u32 *bad) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    F x = a[i], y = b[i];
    u32 e = 0;
    e |= !F::mul32(x, y).eq(F::mul64(x, y));
    e |= (!F::sqr32(x).eq(F::mul64(x, x))) << 1;
    e |= (!F::add32(x, y).eq(F::add64(x, y))) << 2;
    e |= (!F::sub32(x, y).eq(F::sub64(x, y))) << 3;
    e |= (!F::sub32(y, x).eq(F::sub64(y, x))) << 4;
    if constexpr (F::DOT32_OK) e |= (!F::dot32(x, y, y, x).eq(F::add64(F::mul64(x, y), F::mul64(y, x)))) << 5;
    e |= (!F::join(F::sqr32_n_raw(x)).eq(F::mul64(x, x))) << 6;
    if constexpr (F::HEADROOM_4Q) {
        e |= (!F::reduce_2q(F::sqr_lazy(x)).eq(F::mul64(x, x))) << 7;
        e |= (!F::reduce_2q(F::mul_lazy(x, y)).eq(F::mul64(x, y))) << 8;
    }
    if (e) atomicOr(bad, e);
}

static std::mt19937_64 rng(7);

template <class F> std::vector<F> random_elems(size_t n) {
    std::vector<F> v(n);
    for (auto &x : v) {
        for (int k = 0; k < F::N; k++) x.v[k] = rng();
        x.v[F::N - 1] %= F::q(F::N - 1);
    }
    // edges: q − 1, 0, 1
    v[0] = F::zero();
    for (int k = 0; k < F::N; k++) v[1].v[k] = F::q(k);
    v[1].v[0] -= 1;
    v[2] = F::zero();
    v[2].v[0] = 1;
    return v;
}

static const int BLOCK = 256;
static double model;

template <class T> void row(const char *label, void (*kernel)(const T *, T *, int), const T *in, T *out, unsigned blocks,
                            int iters, double ops, double per);

// timed runs a launch 5 times after a warm-up and returns the median ms.
template <class L> double timed(L launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    launch();
    CK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[2];
}

template <class T>
void row(const char *label, void (*kernel)(const T *, T *, int), const T *in, T *out, unsigned blocks, int iters,
         double ops, double per) {
    double ms = timed([&] { kernel<<<blocks, BLOCK>>>(in, out, iters); });
    CK(cudaGetLastError());
    double rate = ops * per / (ms * 1e-3);
    printf("%-28s %8.3f ms  %7.2f·10⁹/s  (%5.1f%% of the model)\n", label, ms, rate / 1e9, 100 * rate / model);
}

template <class F> u32 check(const char *name, size_t n) {
    auto a = random_elems<F>(n), b = random_elems<F>(n);
    std::swap(b[0], b[5]); // pair the edges with random values too
    F *da, *db;
    u32 *bad, hbad = 0;
    CK(cudaMalloc(&da, n * sizeof(F)));
    CK(cudaMalloc(&db, n * sizeof(F)));
    CK(cudaMalloc(&bad, 4));
    CK(cudaMemcpy(da, a.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemset(bad, 0, 4));
    k_check<F><<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(da, db, n, bad);
    CK(cudaGetLastError());
    CK(cudaMemcpy(&hbad, bad, 4, cudaMemcpyDeviceToHost));
    printf("check %s: %zu pairs, 32-bit mul/sqr/add/sub/dot/sqr32_n/lazy vs 64-bit reference: %s (mask %#x)\n", name, n,
           hbad ? "DIFFER" : "equal", hbad);
    cudaFree(da);
    cudaFree(db);
    cudaFree(bad);
    return hbad;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 256;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    model = 64.0 * prop.multiProcessorCount * (clock_khz * 1e3) / 264.0;
    printf("%s: %d SMs, %.2f GHz; model %.1f·10⁹ products/s (264 multiply-adds a product, 64 a clock per SM); "
           "ZK_FIELD_MUL=%d for the Fp2 and madd rows\n",
           prop.name, prop.multiProcessorCount, clock_khz / 1e6, model / 1e9, ZK_FIELD_MUL);

    u32 bad = check<Fp>("fp", 1 << 20) | check<Fr>("fr", 1 << 20) | check<Bls12381Fp>("bls12-381 fp", 1 << 20) |
              check<Bls12381Fr>("bls12-381 fr", 1 << 20);

    // threads: enough to fill every SM several times over
    size_t threads = (size_t)prop.multiProcessorCount * 2048;
    auto fp = random_elems<Fp>(4 * threads);
    auto fr = random_elems<Fr>(4 * threads);
    Fp *dfp, *ofp;
    Fr *dfr, *ofr;
    Fp2 *dfp2, *ofp2;
    CK(cudaMalloc(&dfp, fp.size() * sizeof(Fp)));
    CK(cudaMalloc(&ofp, threads * sizeof(Fp)));
    CK(cudaMalloc(&dfr, fr.size() * sizeof(Fr)));
    CK(cudaMalloc(&ofr, threads * sizeof(Fr)));
    CK(cudaMalloc(&dfp2, 4 * threads * sizeof(Fp2)));
    CK(cudaMalloc(&ofp2, threads * sizeof(Fp2)));
    CK(cudaMemcpy(dfp, fp.data(), fp.size() * sizeof(Fp), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dfr, fr.data(), fr.size() * sizeof(Fr), cudaMemcpyHostToDevice));
    {
        auto fp2 = random_elems<Fp>(8 * threads); // 4·threads Fp2
        CK(cudaMemcpy(dfp2, fp2.data(), fp2.size() * sizeof(Fp), cudaMemcpyHostToDevice));
    }
    unsigned blocks = (unsigned)(threads / BLOCK);
    double ops = 3.0 * iters * threads;

    row("fp mul, 64-bit limbs", k_chain<Fp, MUL64>, dfp, ofp, blocks, iters, ops, 1);
    row("fp mul, 32-bit chains", k_chain<Fp, MUL32>, dfp, ofp, blocks, iters, ops, 1);
    row("fp sqr, 64-bit limbs", k_chain<Fp, SQR64>, dfp, ofp, blocks, iters, ops, 1);
    row("fp sqr, 32-bit chains", k_chain<Fp, SQR32>, dfp, ofp, blocks, iters, ops, 1);
    row("fr mul, 64-bit limbs", k_chain<Fr, MUL64>, dfr, ofr, blocks, iters, ops, 1);
    row("fr mul, 32-bit chains", k_chain<Fr, MUL32>, dfr, ofr, blocks, iters, ops, 1);
    row("fp sqr32_n (generic rows)", k_chain<Fp, SQRN>, dfp, ofp, blocks, iters, ops, 1);
    row("fp add, 64-bit limbs", k_chain<Fp, ADD64>, dfp, ofp, blocks, iters, ops, 1);
    row("fp add, 32-bit chains", k_chain<Fp, ADD32>, dfp, ofp, blocks, iters, ops, 1);
    // an Fp2 product counts as 3 Fp products; a madd as 10
    row("fp2 mul karatsuba (as fp)", k_fp2<Fp2, false>, dfp2, ofp2, blocks, iters, ops, 3);
    row("fp2 mul dot (as fp)", k_fp2<Fp2, true>, dfp2, ofp2, blocks, iters, ops, 3);
    {
        double ms = timed([&] { k_madd<Fp><<<blocks, BLOCK>>>(dfp, ofp, iters); });
        CK(cudaGetLastError());
        double rate = iters * (double)threads / (ms * 1e-3);
        printf("%-28s %8.3f ms  %7.2f·10⁹ madds/s = %.2f·10⁹ products/s\n", "g1 madd (xyzz)", ms, rate / 1e9,
               10 * rate / 1e9);
    }
    // BLS12-381: a 6-limb product counts 2.25 of the model's
    {
        typedef Bls12381Fp BF;
        typedef Bls12381Fr BR;
        typedef Bls12381Fp2 BE;
        auto bf = random_elems<BF>(4 * threads);
        auto br = random_elems<BR>(4 * threads);
        auto be = random_elems<BF>(8 * threads); // 4·threads Fp2
        BF *dbf, *obf;
        BR *dbr, *obr;
        BE *dbe, *obe;
        CK(cudaMalloc(&dbf, bf.size() * sizeof(BF)));
        CK(cudaMalloc(&obf, threads * sizeof(BF)));
        CK(cudaMalloc(&dbr, br.size() * sizeof(BR)));
        CK(cudaMalloc(&obr, threads * sizeof(BR)));
        CK(cudaMalloc(&dbe, 4 * threads * sizeof(BE)));
        CK(cudaMalloc(&obe, threads * sizeof(BE)));
        CK(cudaMemcpy(dbf, bf.data(), bf.size() * sizeof(BF), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dbr, br.data(), br.size() * sizeof(BR), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dbe, be.data(), be.size() * sizeof(BF), cudaMemcpyHostToDevice));
        row("bls fp mul, 64-bit limbs", k_chain<BF, MUL64>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fp mul, 32-bit chains", k_chain<BF, MUL32>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fp sqr, 32-bit chains", k_chain<BF, SQR32>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fp sqr as mul32(x, x)", k_chain<BF, SQRMUL>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fp sqr32_n", k_chain<BF, SQRN>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fp mul_lazy", k_chain<BF, MULLAZY>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fp sqr_lazy", k_chain<BF, SQRLAZY>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fr sqr, 32-bit chains", k_chain<BR, SQR32>, dbr, obr, blocks, iters, ops, 1);
        row("bls fr mul, 32-bit chains", k_chain<BR, MUL32>, dbr, obr, blocks, iters, ops, 1);
        row("bls fp add, 32-bit chains", k_chain<BF, ADD32>, dbf, obf, blocks, iters, ops, 2.25);
        row("bls fp2 mul karatsuba", k_fp2<BE, false>, dbe, obe, blocks, iters, ops, 3 * 2.25);
        row("bls fp2 mul dot", k_fp2<BE, true>, dbe, obe, blocks, iters, ops, 3 * 2.25);
        double ms = timed([&] { k_madd<BF><<<blocks, BLOCK>>>(dbf, obf, iters); });
        CK(cudaGetLastError());
        double rate = iters * (double)threads / (ms * 1e-3);
        printf("%-28s %8.3f ms  %7.2f·10⁹ madds/s = %.2f·10⁹ 6-limb products/s\n", "bls g1 madd (xyzz)", ms,
               rate / 1e9, 10 * rate / 1e9);
        for (int lazy = 0; lazy < 2; lazy++) {
            ms = timed([&] {
                if (lazy) k_madd_form<BF, true><<<blocks, BLOCK>>>(dbf, obf, iters);
                else k_madd_form<BF, false><<<blocks, BLOCK>>>(dbf, obf, iters);
            });
            CK(cudaGetLastError());
            rate = iters * (double)threads / (ms * 1e-3);
            printf("%-28s %8.3f ms  %7.2f·10⁹ madds/s = %.2f·10⁹ 6-limb products/s\n",
                   lazy ? "bls g1 madd, lazy" : "bls g1 madd, eager", ms, rate / 1e9, 10 * rate / 1e9);
        }
        for (void *p : {(void *)dbf, (void *)obf, (void *)dbr, (void *)obr, (void *)dbe, (void *)obe}) CK(cudaFree(p));
    }
    CK(cudaDeviceSynchronize());
    return bad ? 1 : 0;
}
