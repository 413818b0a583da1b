// zk.cuh — everything the kernels compute, by topic: field.cuh (Fr, Fp,
// Fp2), curve.cuh (points), msm.cuh, fixed.cuh and ntt.cuh (the kernels'
// per-thread bodies). Host+device code, so that hosttest.cpp and the host stand-in can
// check it with g++ on a machine with no GPU.
#pragma once

#include "curve.cuh"
#include "field.cuh"
#include "fixed.cuh"
#include "msm.cuh"
#include "ntt.cuh"
