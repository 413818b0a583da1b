# Call 2 of 2026-12-06e: BLS12-381's NTT 2^24 over other pass plans
# (ZK_NTT_STAGES stages a pass in blocks of 2^ZK_NTT_LGBLOCK elements; the
# grid that chose 8 in 1024 was BN254's, on the H200, before the lazy NTTs).
# Part 1 (the NTTs) compiled once a plan, linked with call 1's other parts;
# then CUDAMeasureBLS12381 (G1 2^16 only, G2 2^20, NTT 2^24), two rounds;
# and main's library (lib-base) three times for G2 2^20. Carry
# [".carry-n1", ".carry-e2"].
set -u
export OUT
C=$PWD/.carry-n1 K=$PWD/.carry-e2 F=/tmp/e2
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F --exclude '*.so' --exclude 'obj*' . 2>/dev/null; }
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
nvidia-smi --query-gpu=name --format=csv,noheader
gunzip -c $K/lib-base.so.gz > $F/lib-base.so
plans="8_10 10_10 9_10 7_10 8_9 7_9"
for p in $plans; do
	(mkdir -p $F/obj-$p && tar xzf $K/obj.tgz -C $F/obj-$p && cd gpu/cuda && OBJ=$F/obj-$p PARTS="1" LIB=$F/lib-$p.so ./build.sh -DZK_NTT_STAGES=${p%_*} -DZK_NTT_LGBLOCK=${p#*_} > $F/build-$p.log 2>&1) &
done
wait; echo "built at $(el) s"; grep -h "^part\|built\|error" $F/build-*.log | cut -c1-120
meas() { # tag lib
	[ $(el) -lt 500 ] || return
	(cd gpu && ZKPIPE_CUDA_LIB=$2 ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=16 timeout 60 $C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/measure-$1.log 2>&1
	echo "$1 ($(el) s): $(grep -E "G2 MSM|NTT 2\^24|FAIL|panic" $F/measure-$1.log | sed -E 's/BLS12-381 //; s/: cuda/:/; s/ \((target|load|mean|device).*//; s/, gnark cpu.*//' | tr '\n' ' ')"; pack
}
for r in 1 2; do
	for p in $plans; do meas $p-$r $F/lib-$p.so; done
	meas base-$r $F/lib-base.so
done
meas base-3 $F/lib-base.so
pack; echo "total $(el) s"
