// abi.cuh — zk_abi_version and zk_default_config, written once for both libraries (zkpipe.cu and
// the host stand-in hostlib.cpp): each includes it once, after zk.cuh, so
// the sizes it reports are those of the types its kernels use.
#pragma once

#include "zk.cuh"
#include "zkpipe.h"

extern "C" uint32_t zk_abi_version(zk_abi *out) {
    if (out) {
        out->abi_bytes = sizeof(zk_abi);
        out->err_bytes = ZK_ERR_BYTES;
        out->max_windows = ZK_MAX_WINDOWS;
        out->pointer_bytes = sizeof(void *);
        out->count_bytes = sizeof(uint64_t);
        out->config_bytes = sizeof(zk_config);
        out->msm_args_bytes = sizeof(zk_msm_args);
        out->curve_count = ZK_CURVE_COUNT;
        // each curve's sizes, in curves.h's order
#define ZK_ABI_CURVE_(out, ID, name, label, C, ...)                                                                    \
    out->curves[ZK_CURVE_##ID] = zk_curve_abi{sizeof(C::Fr), sizeof(Affine<C::Fp>), sizeof(Affine<C::Fp2>),            \
                                              sizeof(XYZZ<C::Fp>), sizeof(XYZZ<C::Fp2>)};
        ZK_CURVES(ZK_ABI_CURVE_, out)
#undef ZK_ABI_CURVE_
    }
    return ZK_ABI_VERSION;
}

// zk_default_config: today's defaults, each field's 0 but the size (driver.cuh's
// MsmTuning and ContextConfig read 0 as the default).
extern "C" void zk_default_config(zk_config *out) {
    if (!out) return;
    *out = zk_config{};
    out->config_bytes = sizeof(zk_config);
}
