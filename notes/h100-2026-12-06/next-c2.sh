# Next session's second call, on the warm machine of next-c1.sh (its
# library in gpu/cuda): issue 26's last rows, about 420 s. mulchain 2^26
# (BN254) over 40 proofs for its steady faults (12-04's 8 proofs had 7
# admitted at once: no steady state); then BLS12-381 mulchain 2^26 (its
# table row; its key ~34 GiB fits the disk) as time allows.
set -u
export OUT
C=$PWD/.carry-n1 F=/tmp/n2
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
export ZKPIPE_CUDA_LIB=$PWD/gpu/cuda/libzkpipe_cuda.so
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
row() { # spec proofs
	echo "## $1 x $2 from $(el) s"
	timeout $((585 - $(el))) env KEEP=0 bash bench/scale.sh $C/zkpipe $F/scale $1 $2 -- --device cuda --bg2-device cuda > $F/scale-${1/:/-}.log 2>&1
	grep -vE "setup phase" $F/scale-${1/:/-}.log | tail -16; pack
}
row mulchain:26 40
[ $(el) -lt 330 ] && row mulchain@bls12-381:26 16
pack; echo "total $(el) s"
