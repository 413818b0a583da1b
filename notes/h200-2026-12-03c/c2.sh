set -u
export OUT
B=$PWD/.carry-lead F=/tmp/c2
mkdir -p $F
pack() { tar czf $OUT/logs.tgz -C $F . 2>/dev/null; }
for f in zkpipe; do [ -x $B/$f ] || { gunzip -kf $B/$f.gz; chmod +x $B/$f; }; done
export ZKPIPE_CUDA_LIB=$B/libzkpipe_cuda.so
t0=$(date +%s)
ls /tmp/zkc 2>/dev/null
echo "## bits:24 x48"
bash bench/scale.sh $B/zkpipe $F/scale bits:24 48 -- --device cuda --bg2-device cuda 2>&1 | tee $F/scale-bits-24.txt | grep -vE "setup phase"; pack
rm -rf /tmp/zkc/bits-24 /tmp/zkc/cpu-bits-24
echo "## bits:26 x8  ($(( $(date +%s)-t0 )) s)"
bash bench/scale.sh $B/zkpipe $F/scale bits:26 8 -- --device cuda --bg2-device cuda 2>&1 | tee $F/scale-bits-26.txt; pack
df -h /tmp | tail -1
echo "## partitions 10 x bits 62914560 ($(( $(date +%s)-t0 )) s)"
mkdir -p /tmp/zkc/bits-62914560 && ln -sfn /tmp/zkc/bits-26 /tmp/zkc/bits-62914560/bits
for m in request singles summary; do bash bench/partitions.sh $B/zkpipe $F/part 10 62914560 $m -- --device cuda --bg2-device cuda 2>&1 | tail -8; pack; done | tee $F/partitions.txt; pack
echo "total $(( $(date +%s)-t0 )) s"
