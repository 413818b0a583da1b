// pollcpu.cpp: what a host thread that polls by sleeping 20 µs costs in CPU
// (the library's MSM wait, driver.cuh CudaDev::mark and zk_config.wait_poll_us:
// notes/h100-2026-12-06g.md, call 1). Prints the wakes in 2 s and the share of a
// core they took. No GPU needed.
// g++ -O2 -std=c++17 gpu/cuda/pollcpu.cpp -o pollcpu (make -C gpu/cuda microbench)
#include <chrono>
#include <thread>
#include <cstdio>
#include <sys/prctl.h>
#include <sys/resource.h>
int main() {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    rusage a, b; getrusage(RUSAGE_SELF, &a);
    auto t0 = std::chrono::steady_clock::now(); long n = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) { std::this_thread::sleep_for(std::chrono::microseconds(20)); n++; }
    getrusage(RUSAGE_SELF, &b);
    double cpu = (b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec - a.ru_stime.tv_sec) + (b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e6;
    printf("%ld wakes in 2 s (%.1f µs each), CPU %.3f s: %.1f%% of a core\n", n, 2e6 / n, cpu, cpu / 2 * 100);
}
