// stub/cub/cub.cuh — the CUB calls zkpipe.cu makes, declared for make cucheck.
#pragma once
#include "cuda_runtime.h"
namespace cub {
struct DeviceRadixSort { template <class K, class V> static cudaError_t SortPairs(void *, size_t &, const K *, K *, const V *, V *, int, int, int, cudaStream_t); };
struct DeviceScan { template <class I, class O> static cudaError_t ExclusiveSum(void *, size_t &, I, O, int, cudaStream_t); };
struct DeviceReduce { template <class I, class O> static cudaError_t Max(void *, size_t &, I, O, int, cudaStream_t); };
}
