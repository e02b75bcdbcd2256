#!/usr/bin/env bash
# The recurrent forward in the decode step's lane layout: the device suite (every bundled test, the
# ignored ones included), S4 in every family with per-kernel profiles and fla's S4 beside them,
# S1 recurrent, against the old binary (8e3e564).
set -u
O=${OUT:-out}; W=/tmp/e11; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e11.tgz -C /tmp e11; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
run stats 60 $B/gdn-check kernel-stats --kernel recurrence_forward
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
run s4-rec-old 60 .dev/gdn-check-old run $S4 --family recurrent
run s4-tc 60 $B/gdn-check run $S4 --precision tensor-core
run s1-rec 200 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 3 --family recurrent --profile
wait
echo "fla compiled after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
