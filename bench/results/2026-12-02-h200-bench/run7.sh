#!/usr/bin/env bash
# 1000 tensor-core cases as four 250-case campaigns in parallel, then fla's f32 S1 anchor alone.
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
for seed in 8 9 10 11; do
  ( s=$SECONDS; timeout 200 $B/gdn-check fuzz --cases 250 --seed $seed --family chunked --precision tensor-core > $O/fuzz-chunked-tc-$seed.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-chunked-tc-$seed.txt ) &
done
wait
echo "fuzz done after $SECONDS s"
for f in $O/fuzz-chunked-tc-*.txt; do echo "== $f"; tail -n 16 $f | cut -c1-140; done
timeout 150 python3 .dev/fla_bench.py bwd 8 1024 16 32 float32 | tee $O/fla-s1-f32.txt
timeout 100 python3 .dev/fla_bench.py bwd 2 4096 16 32 bfloat16 | tee $O/fla-s2-bf16.txt
