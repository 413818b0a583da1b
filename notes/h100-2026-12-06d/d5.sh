# Call 5 of 2026-12-06d: what bounds BLS12-381's G1 level0 now (three warps
# a scheduler): ncu's pipe utilization and instruction mix for one launch at
# 2^22, call 4's library. Carry [".carry-n1", ".carry-d4"].
set -u
export OUT
C=$PWD/.carry-n1 F=/tmp/d5
mkdir -p $F
gunzip -c $C/gpu.test.gz > $C/gpu.test; chmod +x $C/gpu.test
gunzip -c .carry-d4/lib-new.so.gz > $F/lib-new.so
(cd gpu && ZKPIPE_CUDA_LIB=$F/lib-new.so ZKPIPE_CUDA_BENCH=1 ZKPIPE_CUDA_MSM_SIZES=22 timeout 150 ncu \
	--section ComputeWorkloadAnalysis --section SchedulerStats --section Occupancy --section InstructionStats \
	--metrics sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active \
	--kernel-name-base demangled -k 'regex:k_level0<Field<Bls12381Fp' --launch-skip 1 -c 1 \
	$C/gpu.test -test.run '^$' -test.bench 'CUDAMeasureBLS12381$' -test.benchtime 1x) > $F/ncu-g1.log 2>&1
echo "ncu rc=$?"; grep -vE "PROF|^BLS" $F/ncu-g1.log | grep -E "pipe|Busy|Ipc|Issue|Registers|Occupancy|Eligible|inst_executed|Duration" | head -30
tar czf $OUT/logs.tgz -C $F ncu-g1.log
