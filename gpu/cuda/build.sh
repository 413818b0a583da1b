#!/bin/sh
# Builds libzkpipe_cuda.so beside this script with nvcc (sm_90a, the H200).
# Usage: gpu/cuda/build.sh [extra nvcc flags]   (NVCC=/path/to/nvcc to override;
# LIB=name.so for another output name, e.g. a -DZK_FIELD_MUL=64 build beside
# the default one; ARCH=sm_90 for an nvcc without sm_90a, e.g. 11.8's, to
# check that the sources compile and read ptxas's report)
#
# The library is seven translation units of zkpipe.cu (ZK_PART: the device
# and the NTTs; per curve, BN254 then BLS12-381: the G1 MSMs, the G2 MSMs,
# the G2 tables and ones), compiled at once and linked: on one core BN254's
# parts take nvcc about 4 minutes, the longest part about 2.
set -e
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
LIB=${LIB:-libzkpipe_cuda.so}
ARCH=${ARCH:-sm_90a}
case $ARCH in
sm_90a) gencode=-gencode=arch=compute_90a,code=sm_90a ;;
*) gencode=-gencode=arch=compute_${ARCH#sm_},code=$ARCH ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pids=""
for part in 1 2 3 4 5 6 7; do
	(
		t0=$(date +%s)
		$NVCC -O3 -std=c++17 -c -Xcompiler -fPIC $gencode -Xptxas -warn-spills -DZK_PART=$part \
			"$@" -o "$tmp/part$part.o" zkpipe.cu >"$tmp/part$part.log" 2>&1
		rc=$?
		echo "part $part: $(($(date +%s) - t0)) s (rc $rc)" >>"$tmp/times"
		exit $rc
	) &
	pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
cat "$tmp"/part*.log
sort -n -k3 "$tmp/times" # which part bounds the build
[ "$rc" = 0 ] || { echo "nvcc failed" >&2; exit 1; }
$NVCC -shared $gencode -o "$LIB" "$tmp"/part1.o "$tmp"/part2.o "$tmp"/part3.o "$tmp"/part4.o \
	"$tmp"/part5.o "$tmp"/part6.o "$tmp"/part7.o
echo "built $(pwd)/$LIB"
