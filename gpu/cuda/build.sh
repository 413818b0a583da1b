#!/bin/sh
# Builds libzkpipe_cuda.so beside this script with nvcc (sm_90a, the H200).
# Usage: gpu/cuda/build.sh [extra nvcc flags]   (NVCC=/path/to/nvcc to override)
set -e
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
$NVCC -O3 -std=c++17 -shared -Xcompiler -fPIC \
	-gencode=arch=compute_90a,code=sm_90a \
	-Xptxas -warn-spills \
	"$@" -o libzkpipe_cuda.so zkpipe.cu
echo "built $(pwd)/libzkpipe_cuda.so"
