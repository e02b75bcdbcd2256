#!/usr/bin/env bash
# Ninth session, call 7: where the few-heads forward's time goes, by GDN_KERNEL_DIR variants that
# drop work (wrong results, timing only): d1 the key products' sums, d2 the gather of S_0ᵀk̂, d3 the
# output sums, d4 all three, d5 STAGE 32.
set -u
O=${OUT:-out}; W=/tmp/e7; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e7.tgz -C /tmp e7; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
run s4-base 60 $B/gdn-check run $S4
for v in d1 d2 d3 d4 d5; do GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4; done
for v in d4 d5; do GDN_KERNEL_DIR=.dev/kv/$v run stats-$v 60 $B/gdn-check kernel-stats --kernel recurrence_forward_chunks; done
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
