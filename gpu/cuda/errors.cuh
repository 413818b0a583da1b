// errors.cuh — per-call error messages for the C entry points (zkpipe.h):
// an entry point opens an ErrScope over the caller's buffer, and everything it
// calls reports through fail_at, which writes there. The buffer is found
// through a thread-local pointer, set for the length of one call on the
// calling thread, so concurrent calls (on other threads) never share it.
#pragma once

#include "zkpipe.h"

#include <stdarg.h>
#include <stdio.h>

inline thread_local char *zk_err_cur = nullptr;

// ErrScope makes err the current call's message buffer (ZK_ERR_BYTES bytes).
struct ErrScope {
    char *prev;
    explicit ErrScope(char *err) : prev(zk_err_cur) {
        zk_err_cur = err;
        if (err) err[0] = 0;
    }
    ~ErrScope() { zk_err_cur = prev; }
    ErrScope(const ErrScope &) = delete;
    ErrScope &operator=(const ErrScope &) = delete;
};

// fail_at writes "msg (file:line)" for the current call and returns code
// (−1 when code is 0: a failure is never reported as success). The first
// message of a call wins: later ones are the unwinding of the same failure.
inline int fail_at(int code, const char *file, int line, const char *fmt, ...) {
    char *e = zk_err_cur;
    if (e && e[0] == 0) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(e, ZK_ERR_BYTES, fmt, ap);
        va_end(ap);
        if (k >= 0 && k < ZK_ERR_BYTES) snprintf(e + k, (size_t)(ZK_ERR_BYTES - k), " (%s:%d)", file, line);
    }
    return code ? code : -1;
}

#define FAILF(...) fail_at(-1, __FILE__, __LINE__, __VA_ARGS__)

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        int r_ = (x);                                                                                                  \
        if (r_) return r_;                                                                                             \
    } while (0)
