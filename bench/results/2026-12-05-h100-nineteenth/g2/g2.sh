#!/usr/bin/env bash
# Nineteenth session, call 2. S4 (interval 4), three rounds alternating: b7a6d56 (the fused norm
# backward removed), the working tree (the column backward's shares summed by warps of their own,
# a chunk late), and the working tree with two overrides of qk_norm_conv_backward (q-split: 256
# threads, each element's partial rows split over VEC / DK threads, one round of loads at S4;
# q-round32: 64 threads, rounds of 32 rows). Then the working tree's correctness on the device:
# S4 at intervals 7 and 32 (the replay), the device suite, three device tests and a recurrent
# campaign. Packs $OUT/g2.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g2.tgz -C /tmp g2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for r in 1 2 3; do
run s4-old-$r 60 $B/gdn-check-b7a6d56 run $S4 --checkpoint-interval 4
run s4-new-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/q-split run s4-qsplit-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/q-round32 run s4-qround32-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
done
echo "s4 after $((SECONDS-t0)) s" > $W/progress.txt; pack
run s4-i7 60 $B/gdn-check run $S4 --checkpoint-interval 7
run s4-i32 60 $B/gdn-check run $S4
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state --checkpoint-interval 4
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "suite after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for t in $B/test-gdn-train-adopted_device $B/test-gdn-train-timing $B/test-gdn-train-grids; do GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored; done
run fuzz 90 $B/gdn-check fuzz --cases 200 --seed 92 --jobs 8 --family recurrent
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
