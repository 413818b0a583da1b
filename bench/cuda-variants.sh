#!/usr/bin/env bash
# Builds the CUDA library and, beside it, variants of a few of its parts
# (other -D options), each linked with the default build's other parts: one
# build's wall time for several libraries (a device call's longest step is
# the build, bound by its longest part; a variant of parts 1 and 5 compiles
# under it).
# Run on the device machine from the repository root.
#
# Usage: bench/cuda-variants.sh LOGDIR [NAME:PARTS:FLAGS ...]
#   bench/cuda-variants.sh /tmp/v 'ntt6:1:-DZK_NTT_STAGES=6' 'lg9:1:-DZK_NTT_LGBLOCK=9 -DZK_NTT_STAGES=6'
# (the build options are the few notes/cuda-variants.md lists as kept; a variant
# that is no build option is a patch: apply it in a copy of the tree first)
# gives gpu/cuda/libzkpipe_cuda.so (the default build) and
# gpu/cuda/lib<NAME>.so for each variant; LOGDIR holds each build's log
# (ptxas -v: registers and spills a kernel) and prints the parts' times.
# The parts (build.sh, zkpipe.cu's ZK_PART): 1 the device and the NTTs;
# BN254's G1 MSMs 2, G2 MSMs 3, G2 tables and ones 4; BLS12-381's 5, 6, 7,
# and 8 and 9 its G2 MSMs' reduction kernels (levelN and reduce, segment; a
# change to BLS12-381's G2 additions is a variant of "6 8 9").
set -uo pipefail
logs=$1
shift
mkdir -p "$logs"
B=gpu/cuda
t0=$(date +%s)
(cd $B && OBJ=objA ./build.sh -Xptxas -v >"$logs/build-A.log" 2>&1; echo "rc=$? at $(($(date +%s) - t0)) s" >>"$logs/build-A.log") &
pids=$!
for v in "$@"; do
	IFS=: read -r name parts flags <<<"$v"
	# shellcheck disable=SC2086 # flags are words
	(cd $B && rm -rf "obj$name" && OBJ="obj$name" PARTS="$parts" LINK=0 ./build.sh -Xptxas -v $flags >"$logs/build-$name.log" 2>&1
		echo "rc=$? at $(($(date +%s) - t0)) s" >>"$logs/build-$name.log") &
	pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
grep -H -E "^part |^rc=" "$logs"/build-*.log
[ -f $B/objA/part1.o ] || { echo "the default build failed: $logs/build-A.log" >&2; exit 1; }
for v in "$@"; do
	IFS=: read -r name parts _ <<<"$v"
	ok=1
	for p in 1 2 3 4 5 6 7 8 9; do
		case " $parts " in
		*" $p "*) [ -f "$B/obj$name/part$p.o" ] || ok=0 ;; # its own, or no variant
		*) cp "$B/objA/part$p.o" "$B/obj$name/" ;;
		esac
	done
	if [ $ok = 1 ] && (cd $B && OBJ="obj$name" PARTS="" LIB="lib$name.so" ./build.sh >>"$logs/build-$name.log" 2>&1); then
		echo "built $B/lib$name.so (parts $parts from its own build)"
	else
		echo "variant $name: no library (see $logs/build-$name.log)"
	fi
done
