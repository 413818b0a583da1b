// hornerbench.cpp: how long the library's host side takes for one table MSM's
// step 3 of the bucket reduction (driver.cuh reduce_buckets: combine_bits over
// K = 16 class sums, lgS = 4, BLS12-381's G1), with the product the operators
// are built with (ZK_FIELD_MUL 32: PTX carry chains emulated on the host) and
// with the 64-bit limbs (-DZK_FIELD_MUL=64). Timing only: the sums are
// arbitrary field elements, not points.
// g++ -O3 -std=c++17 -I gpu/cuda gpu/cuda/hornerbench.cpp -o hornerbench (make -C gpu/cuda microbench)
#include "abi.cuh"
#include "driver.cuh"
#include "zk.cuh"
#include <chrono>
#include <cstdio>
int main() {
    typedef Bls12381Fp F;
    const int limbs = (int)(sizeof(F{}.v) / sizeof(F{}.v[0]));
    XYZZ<F> sums[16];
    for (int i = 0; i < 16; i++) {
        sums[i] = XYZZ<F>::inf();
        for (int l = 0; l < limbs - 1; l++) {
            sums[i].X.v[l] = 0x1234567u * (i + 1) + l;
            sums[i].Y.v[l] = 0x7654321u * (i + 3) + l;
        }
        sums[i].ZZ = field_one<F>();
        sums[i].ZZZ = field_one<F>();
    }
    XYZZ<F> r;
    const int reps = 500;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; i++) r = combine_bits(sums, 16, 4);
    auto t1 = std::chrono::steady_clock::now();
    printf("combine_bits K=16 lgS=4: %.1f us (%u)\n", std::chrono::duration<double, std::micro>(t1 - t0).count() / reps,
           (unsigned)r.X.v[0]);
}
