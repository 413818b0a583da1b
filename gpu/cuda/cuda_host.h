// cuda_host.h — just enough of CUDA's execution model for g++ to run
// kernels.cuh's kernels on the CPU (the host stand-in, hostlib.cpp):
//
//   - a launch runs its blocks one after another; in a kernel with barriers
//     each thread of a block is a fiber (ucontext) with its own stack, and
//     __syncthreads switches to the next fiber, so a block's threads meet at
//     every barrier as on a GPU; a kernel without barriers runs its threads
//     one after another (a fiber switch costs two system calls), and a
//     __syncthreads there aborts: the launch said it had none;
//   - blockIdx, threadIdx, blockDim, gridDim are globals set per fiber;
//   - __shared__ arrays are function-level statics (one block runs at a time)
//     and ZK_DYN_SHARED names one buffer of dynamic shared memory;
//   - launches are serialised by a mutex: Go calls the stand-in from several
//     threads, and the globals above are the one running launch's.
//
// Slow (a fiber switch per thread and barrier): for test sizes only.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>

#include <functional>
#include <mutex>
#include <vector>

#define __global__
#define __device__
#define __launch_bounds__(...)
#define __shared__ static

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    dim3() = default;
    dim3(unsigned x_) : x(x_) {}
};

inline dim3 blockIdx, threadIdx, blockDim, gridDim;

namespace cuda_host {

const size_t DYN_SMEM = 227 << 10; // the H200's most dynamic shared memory a block (k_ntt_regs asks 128 KiB)
const size_t STACK = 64 << 10;    // a fiber's stack
const unsigned MAX_THREADS = 1024;

alignas(64) inline unsigned char dyn_smem[DYN_SMEM];

struct Fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    bool done = false;
};

inline std::mutex mu;             // one launch at a time
inline bool fibered = false;      // the running launch has barriers
inline ucontext_t sched;          // the launching thread's context
inline Fiber *fibers = nullptr;   // this block's threads
inline unsigned cur = 0;          // the running thread
inline const std::function<void()> *body = nullptr;

inline void run_fiber() {
    (*body)();
    fibers[cur].done = true;
    swapcontext(&fibers[cur].ctx, &sched);
}

// barrier: back to the scheduler, which resumes every other thread of the
// block up to the same barrier before this one goes on.
inline void barrier() {
    if (!fibered) abort(); // launched as a kernel without barriers
    swapcontext(&fibers[cur].ctx, &sched);
}

// launch runs k (a call of one kernel with its arguments) over grid × block
// threads; barriers says whether the kernel calls __syncthreads. smem must
// fit DYN_SMEM.
inline void launch(unsigned grid, unsigned block, size_t smem, const std::function<void()> &k, bool barriers = false) {
    if (block == 0 || grid == 0) return;
    if (block > MAX_THREADS || smem > DYN_SMEM) abort(); // a launch the GPU refuses too
    std::lock_guard<std::mutex> g(mu);
    gridDim = dim3(grid);
    blockDim = dim3(block);
    fibered = barriers;
    if (!barriers) {
        for (unsigned b = 0; b < grid; b++) {
            blockIdx = dim3(b);
            for (unsigned t = 0; t < block; t++) {
                threadIdx = dim3(t);
                k();
            }
        }
        return;
    }
    static std::vector<Fiber> pool(MAX_THREADS);
    fibers = pool.data();
    body = &k;
    for (unsigned b = 0; b < grid; b++) {
        blockIdx = dim3(b);
        for (unsigned t = 0; t < block; t++) {
            Fiber &f = pool[t];
            if (f.stack.empty()) f.stack.resize(STACK);
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = f.stack.data();
            f.ctx.uc_stack.ss_size = f.stack.size();
            f.ctx.uc_link = nullptr;
            f.done = false;
            makecontext(&f.ctx, run_fiber, 0);
        }
        // Rounds: each thread runs to its next barrier or its end.
        for (bool live = true; live;) {
            live = false;
            for (unsigned t = 0; t < block; t++) {
                if (pool[t].done) continue;
                cur = t;
                threadIdx = dim3(t);
                swapcontext(&sched, &pool[t].ctx);
                live = live || !pool[t].done;
            }
        }
    }
}

} // namespace cuda_host

inline void __syncthreads() { cuda_host::barrier(); }

#define ZK_DYN_SHARED(T, name) T *name = reinterpret_cast<T *>(cuda_host::dyn_smem)
