#!/usr/bin/env bash
# Twentieth session, call 1. HEAD (161dd4d: the q/k norms' forward and backward on their new thread
# counts, never run on a GPU before) at S4 (interval 4) three times, fla's S4 graph figures in the
# same call, every head size at B = 64, T = 1 and at S4's heads, then HEAD's device suite, two
# campaigns and the other device tests. Packs $OUT/g1.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g1; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g1.tgz -C /tmp g1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $W/gpu.txt 2>&1
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent --checkpoint-interval 4"
for r in 1 2 3; do run s4-head-$r 60 $B/gdn-check run $S4; done
echo "s4 after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fla-fwd 150 python3 .dev/fla_bench.py fwd 1 128 2 4 bfloat16
run fla-bwd 150 python3 .dev/fla_bench.py bwd 1 128 2 4 bfloat16
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for r in 4 5; do run s4-head-$r 60 $B/gdn-check run $S4; done
for d in 8 16 24 32 48 64 80 96 128 160 192 256; do
run sizes-$d-b64 40 $B/gdn-check run --nk 2 --nv 4 --dk $d --dv $d --batch 64 --seq 1 --repeat 20 --profile
run sizes-$d-s4 40 $B/gdn-check run --nk 2 --nv 4 --dk $d --dv $d --batch 1 --seq 128 --repeat 20 --profile
done
echo "sizes after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "suite after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 95 --jobs 8 --family recurrent
run fuzz-all 90 $B/gdn-check fuzz --cases 150 --seed 96 --jobs 8
echo "fuzz after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored; pack ;; esac; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
