#!/usr/bin/env bash
# TC fuzz campaign alongside a first compile of fla's kernels (CPU work), then bench-fla (its own
# compile step then hits the warm Triton cache) alone on the GPU.
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
( s=$SECONDS; timeout 380 $B/gdn-check fuzz --cases 1000 --seed 8 --family chunked --precision tensor-core > $O/fuzz-chunked-tc.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-chunked-tc.txt ) &
for dtype in bfloat16 float32; do timeout 300 python3 .dev/fla_bench.py bwd 1 128 2 4 $dtype > /dev/null 2>&1 & done
wait
echo "fuzz and first compile done after $SECONDS s"
bash bench/h200.sh bench-fla
tail -n 16 $O/fuzz-chunked-tc.txt | cut -c1-160
grep -h "FLA\|=====" $O/bench-fla.txt
