#!/usr/bin/env bash
# Fourteenth session, call 2: which change since 6dddcc5 slowed the column backward (59 -> 81 us at S4).
set -u
O=${OUT:-out}; W=/tmp/e4; rm -rf $W; mkdir -p $O $W; B=.dev/bin
(cd .dev && tar xJf bin.tar.xz)
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for r in 1 2; do
run s4-head-$r 60 $B/gdn-check run $S4
for v in d33c7b0 b32bab1 5dcdea3 h1 h2 h4; do GDN_KERNEL_DIR=.dev/bis/$v run s4-$v-$r 60 $B/gdn-check run $S4; done
GDN_KERNEL_DIR=bench/results/2026-12-04-h200-thirteenth/c833c7d run s4-c833c7d-$r 60 $B/gdn-check run $S4
done
tar czf $O/e4.tgz -C /tmp e4
