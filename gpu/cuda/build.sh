#!/bin/sh
# Builds libzkpipe_cuda.so beside this script with nvcc (sm_90a, the H200).
# Usage: gpu/cuda/build.sh [extra nvcc flags]   (NVCC=/path/to/nvcc to override;
# LIB=name.so for another output name, e.g. a -DZK_FIELD_MUL=64 build beside
# the default one)
set -e
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
LIB=${LIB:-libzkpipe_cuda.so}
$NVCC -O3 -std=c++17 -shared -Xcompiler -fPIC \
	-gencode=arch=compute_90a,code=sm_90a \
	-Xptxas -warn-spills \
	"$@" -o "$LIB" zkpipe.cu
echo "built $(pwd)/$LIB"
