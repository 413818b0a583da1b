# Call 7 of 2026-12-06d (call 6's machine, still warm: its /tmp/d6 libraries):
# BLS12-381's mulchain 2^20 stream with G2's level0 reading y late, A B A B.
# Carry [".carry-n1"]. Run as one command line:
F=/tmp/d6; C=$PWD/.carry-n1; ls $F/*.so || exit 1; gunzip -c $C/zkpipe.gz > $C/zkpipe; chmod +x $C/zkpipe; for r in 1 2; do for v in base late; do ZKPIPE_CUDA_LIB=$F/lib-$v.so timeout 30 $C/zkpipe bench --builtin mulchain --constraints 1000000 --skip-gnark --device cuda --bg2-device cuda --curve bls12-381 -n 96 > $OUT/stream-$v-$r.log 2>&1; echo "$v-$r: $(grep -E 'zkpipe stream|error' $OUT/stream-$v-$r.log | tail -1)"; done; done
