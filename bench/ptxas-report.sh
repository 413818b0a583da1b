#!/usr/bin/env bash
# Tabulates ptxas's report (registers, stack, spill stores and loads per
# kernel) from one or two build logs of `gpu/cuda/build.sh -Xptxas -v` (a
# device call's, or bench/cuda-variants.sh's LOGDIR/build-*.log), so that a
# kernel change's register pressure reads before and after side by side.
#
# Usage: bench/ptxas-report.sh LOG [LOG2] [PATTERN]
#   bench/ptxas-report.sh /tmp/v/build-A.log /tmp/v/build-early.log Bls12381Fp
# PATTERN (an awk regex over the demangled name) keeps matching kernels.
#
# Without a GPU: Debian's nvidia-cuda-toolkit (11.8, in bookworm's non-free;
# add "contrib non-free" to /etc/apt/sources.list.d/debian.sources) compiles
# the library for sm_90 here: `ARCH=sm_90 OBJ=/tmp/o LINK=0 PARTS="6 8"
# gpu/cuda/build.sh -Xptxas -v > LOG 2>&1` (on two cores part 6 takes about
# ten minutes). Its register counts differ from CUDA 13's by a few, its
# spills by up to a third, in the same direction so far (notes/h100-2026-12-06b.md).
set -euo pipefail
a=$1
b=${2:-}
pat=${3:-.}
if [ -n "$b" ] && [ ! -f "$b" ]; then # two arguments: LOG PATTERN
	pat=$b
	b=
fi
table() { # LOG: "kernel<TAB>regs stack stores loads" per entry, demangled
	awk '
	/Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); k = substr($0, RSTART + 1, RLENGTH - 2); next }
	/bytes stack frame/ && k != "" { split("", v); c0 = 0
		n = split($0, w, /[ ,]+/); for (i = 1; i <= n; i++) if (w[i] ~ /^[0-9]+$/) v[++c0] = w[i]
		stack = v[1]; stores = v[2]; loads = v[3]; next }
	/Used [0-9]+ registers/ && k != "" { match($0, /Used [0-9]+/); r = substr($0, RSTART + 5, RLENGTH - 5)
		printf "%s\t%s %s %s %s\n", k, r, stack + 0, stores + 0, loads + 0; k = ""; stack = stores = loads = 0 }
	' "$1" | sort -u | while IFS=$'\t' read -r k v; do
		printf '%s\t%s\n' "$(c++filt "$k" | sed -E 's/\(anonymous namespace\):://g; s/Field<Bls12381FpParams>/BlsFp/g; s/Field<FpParams>/Fp/g; s/Field<Bls12381FrParams>/BlsFr/g; s/Field<FrParams>/Fr/g; s/\(.*//')" "$v"
	done | grep -v 'cub::' | awk -F'\t' -v p="$pat" '$1 ~ p' | sort -u # a kernel of several parts: once
}
printf '%-60s %s\n' "kernel" "regs stack spill-stores spill-loads${b:+  |  after}"
if [ -z "$b" ]; then
	table "$a" | sort | awk -F'\t' '{ printf "%-60s %s\n", substr($1, 1, 60), $2 }'
else
	# kernels of either log; "-" where a kernel is in one only (a renamed or new instantiation)
	join -t $'\t' -a 1 -a 2 -e - -o 0,1.2,2.2 <(table "$a" | sort -t $'\t' -k1,1) <(table "$b" | sort -t $'\t' -k1,1) |
		awk -F'\t' '{ printf "%-60s %-20s | %s\n", substr($1, 1, 60), $2, $3 }'
fi
