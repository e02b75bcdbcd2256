#!/usr/bin/env bash
# Session 3, call 1: driver statistics per kernel, the new solve at S1, batch scaling (occupancy), fuzz rates.
set -u
O=${OUT:-out}; W=/tmp/c1; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
pack() { tar czf $O/c1.tgz -C /tmp c1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
run stats-128 60 $B/gdn-check kernel-stats
run stats-64 60 $B/gdn-check kernel-stats --dk 64 --dv 64 --kernel coop_
pack
C="--family chunked --repeat 5 --profile"
run s1-tc 60 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 $C --precision tensor-core --reference-heads 1
run s1-f32 60 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 $C --precision f32 --reference-heads 1
GDN_KERNEL_DIR=.dev/abl/old run s1-tc-oldstate 60 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 $C --precision tensor-core --reference-sequences 0
for b in 1 2 4; do run s1-tc-b$b 40 $B/gdn-check run --preset qwen3-next --batch $b --seq 1024 $C --precision tensor-core --reference-sequences 0; done
run s1-tc-nv8 40 $B/gdn-check run --preset qwen3-next --nk 4 --nv 8 --batch 8 --seq 1024 $C --precision tensor-core --reference-sequences 0
( s=$SECONDS; timeout 150 $B/test-device --include-ignored --test-threads 2 > $W/tests.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/tests.txt )
echo "ours done after $((SECONDS-t0)) s" > $W/progress.txt; pack
( run fuzz-tc 200 $B/gdn-check fuzz --cases 1000 --seed 7 --jobs 7 --family chunked --precision tensor-core ) &
( run fuzz-f32 200 $B/gdn-check fuzz --cases 1000 --seed 7 --jobs 7 --family chunked --precision f32 ) &
wait
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
