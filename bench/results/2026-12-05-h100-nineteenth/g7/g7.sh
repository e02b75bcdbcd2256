#!/usr/bin/env bash
# Nineteenth session, call 7 (the last of the session's device time). HEAD (403484c: the q/k norms'
# backward on 256 threads, the column backward's partials stored after its barrier) at S4
# (interval 4), three rounds alternating with HEAD under overrides: c-128 and c-256 (the conv/q/k
# norms' forward on 128 and 256 threads, one element of q and k a thread), q-128 (the q/k backward
# on 128 threads: one thread an element, two rounds of loads). fla's S4 graph figures in the same
# call. Then HEAD's device suite, two campaigns and the other device tests. Packs $OUT/g7.tgz as
# it goes.
set -u
O=${OUT:-out}; W=/tmp/g7; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g7.tgz -C /tmp g7; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent --checkpoint-interval 4"
for r in 1 2 3; do
run s4-head-$r 60 $B/gdn-check run $S4
for v in c-128 c-256 q-128; do
GDN_KERNEL_DIR=.dev/bis/$v run s4-$v-$r 60 $B/gdn-check run $S4
done
done
echo "s4 after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fla-fwd 150 python3 .dev/fla_bench.py fwd 1 128 2 4 bfloat16
run fla-bwd 150 python3 .dev/fla_bench.py bwd 1 128 2 4 bfloat16
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "suite after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 93 --jobs 8 --family recurrent
run fuzz-all 90 $B/gdn-check fuzz --cases 150 --seed 94 --jobs 8
echo "fuzz after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored; pack ;; esac; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
