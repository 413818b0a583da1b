// cuda_host.h — just enough of CUDA's execution model for g++ to run
// kernels.cuh's kernels on the CPU (the host stand-in, hostlib.cpp):
//
//   - a launch runs its blocks one after another; in a kernel with barriers
//     each thread of a block is a fiber with its own stack, and
//     __syncthreads switches to the next fiber, so a block's threads meet at
//     every barrier as on a GPU; a kernel without barriers runs its threads
//     one after another, and a __syncthreads there aborts: the launch said
//     it had none. On x86-64 a fiber switch is a few instructions (the
//     callee-saved registers and the stack pointer, fiber_switch below);
//     elsewhere it is ucontext's, two system calls a switch (the signal
//     mask), which made about a third of the CUDA tests' time on the host;
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

#if defined(__x86_64__)
// A fiber's context is its saved stack pointer: fiber_switch(from, to)
// pushes the callee-saved registers (and MXCSR and the x87 control word)
// on the running stack, saves its pointer in *from, loads to and pops what
// was saved there. A new fiber's stack is laid out as fiber_switch leaves
// one, returning into fiber_start.
extern "C" void zk_host_fiber_switch(void **from, void *to);
asm(R"(
    .pushsection .text
    .weak zk_host_fiber_switch
    .type zk_host_fiber_switch, @function
zk_host_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size zk_host_fiber_switch, .-zk_host_fiber_switch
    .popsection
)");
struct FiberCtx {
    void *sp = nullptr;
};
inline void fiber_switch(FiberCtx *from, FiberCtx *to) { zk_host_fiber_switch(&from->sp, to->sp); }
#else
struct FiberCtx {
    ucontext_t uc;
};
inline void fiber_switch(FiberCtx *from, FiberCtx *to) { swapcontext(&from->uc, &to->uc); }
#endif

struct Fiber {
    FiberCtx ctx;
    std::vector<char> stack;
    bool done = false;
};

inline std::mutex mu;             // one launch at a time
inline bool fibered = false;      // the running launch has barriers
inline FiberCtx sched;            // the launching thread's context
inline Fiber *fibers = nullptr;   // this block's threads
inline unsigned cur = 0;          // the running thread
inline const std::function<void()> *body = nullptr;

inline void run_fiber() {
    (*body)();
    fibers[cur].done = true;
    fiber_switch(&fibers[cur].ctx, &sched);
    abort(); // a finished fiber is never resumed
}

// barrier: back to the scheduler, which resumes every other thread of the
// block up to the same barrier before this one goes on.
inline void barrier() {
    if (!fibered) abort(); // launched as a kernel without barriers
    fiber_switch(&fibers[cur].ctx, &sched);
}

// fiber_init makes f a fiber that will run run_fiber from its stack's top.
inline void fiber_init(Fiber &f) {
#if defined(__x86_64__)
    // top, 16-byte aligned; below it fiber_start's return address (never
    // used), run_fiber's address for fiber_switch's ret, then the saved
    // registers: 6 of them and the MXCSR/x87 word, all zero but those two
    // control words, which take the running thread's values
    uintptr_t top = (reinterpret_cast<uintptr_t>(f.stack.data()) + f.stack.size()) & ~uintptr_t(15);
    void **sp = reinterpret_cast<void **>(top);
    *--sp = nullptr;                                     // run_fiber's caller: none (it aborts rather than return)
    *--sp = reinterpret_cast<void *>(&run_fiber);        // fiber_switch's ret lands here, rsp ≡ 8 mod 16 as at a call
    for (int i = 0; i < 6; i++) *--sp = nullptr;         // rbp, rbx, r12–r15
    uint32_t ctl[2] = {0, 0};
    asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(ctl[0]), "=m"(*reinterpret_cast<uint16_t *>(&ctl[1])));
    *--sp = *reinterpret_cast<void **>(ctl);             // MXCSR and the x87 control word
    f.ctx.sp = sp;
#else
    getcontext(&f.ctx.uc);
    f.ctx.uc.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc.uc_stack.ss_size = f.stack.size();
    f.ctx.uc.uc_link = nullptr;
    makecontext(&f.ctx.uc, run_fiber, 0);
#endif
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
            f.done = false;
            fiber_init(f);
        }
        // Rounds: each thread runs to its next barrier or its end.
        for (bool live = true; live;) {
            live = false;
            for (unsigned t = 0; t < block; t++) {
                if (pool[t].done) continue;
                cur = t;
                threadIdx = dim3(t);
                fiber_switch(&sched, &pool[t].ctx);
                live = live || !pool[t].done;
            }
        }
    }
}

} // namespace cuda_host

inline void __syncthreads() { cuda_host::barrier(); }

#define ZK_DYN_SHARED(T, name) T *name = reinterpret_cast<T *>(cuda_host::dyn_smem)
