#!/usr/bin/env bash
# The recurrent forward's inputs loaded 1, 2 or 3 steps ahead (GDN_KERNEL_DIR variants r1-r3 of
# recurrence_forward): S4 and S1 with per-kernel profiles.
set -u
O=${OUT:-out}; W=/tmp/e12; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e12.tgz -C /tmp e12; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for v in r1 r2 r3; do
  GDN_KERNEL_DIR=.dev/kv/$v run stats-$v 60 $B/gdn-check kernel-stats --kernel recurrence_forward
  GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4
done
pack
for v in r1 r2 r3; do GDN_KERNEL_DIR=.dev/kv/$v run s1-$v 100 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 3 --family recurrent --profile; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
