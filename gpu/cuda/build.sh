#!/bin/sh
# Builds libzkpipe_cuda.so beside this script with nvcc (sm_90a, the H200).
# Usage: gpu/cuda/build.sh [extra nvcc flags]   (NVCC=/path/to/nvcc to override;
# LIB=name.so for another output name, e.g. a -DZK_FIELD_MUL=64 build beside
# the default one; ARCH=sm_90 for an nvcc without sm_90a, e.g. 11.8's, to
# check that the sources compile and read ptxas's report)
#
# The library is translation units of zkpipe.cu, one a part (ZK_PART: 1 the
# device and the NTTs; then each curve's, as curves.h lists them: BN254's
# G1 MSMs, G2 MSMs, G2 tables and ones 2–4, BLS12-381's 5–7, and 8 and 9
# BLS12-381's G2 reduction kernels, split from 6), compiled at once and
# linked: on one core BN254's parts take nvcc about 4 minutes, the longest
# part about 2.
#
# Variants of a few parts without rebuilding the rest (a device call's
# longest step is the build, 5 minutes on 16 cores when part 6 was one
# unit; a BLS12-381 G2 variant is PARTS="6 8 9"): OBJ=dir keeps the parts'
# objects in dir (default: a temporary directory, removed); PARTS="1 5"
# compiles only those parts and links with the others' objects already in
# OBJ (PARTS="" only links); LINK=0 compiles without linking.
set -e
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
LIB=${LIB:-libzkpipe_cuda.so}
ARCH=${ARCH:-sm_90a}
case $ARCH in
sm_90a) gencode=-gencode=arch=compute_90a,code=sm_90a ;;
*) gencode=-gencode=arch=compute_${ARCH#sm_},code=$ARCH ;;
esac
if [ -n "${OBJ:-}" ]; then
	mkdir -p "$OBJ"
	tmp=$(cd "$OBJ" && pwd)
	rm -f "$tmp/times"
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
# every part: curves.h's list (ZK_BUILD_PARTS), its 0s dropped
all_parts=$(printf '#include "curves.h"\nZK_BUILD_PARTS\n' | ${CXX:-g++} -E -P -x c++ -I. - | tr -s ' \t' '\n' | grep -v '^0*$' | tr '\n' ' ')
[ -n "$all_parts" ] || { echo "build.sh: no parts from curves.h" >&2; exit 1; }
pids=""
for part in ${PARTS-$all_parts}; do
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
cat "$tmp"/part*.log 2>/dev/null || true
[ -f "$tmp/times" ] && sort -n -k3 "$tmp/times" # which part bounds the build
[ "$rc" = 0 ] || { echo "nvcc failed" >&2; exit 1; }
[ "${LINK:-1}" = 0 ] && exit 0
objs=""
for part in $all_parts; do objs="$objs $tmp/part$part.o"; done
$NVCC -shared $gencode -o "$LIB" $objs
echo "built $(pwd)/$LIB"
