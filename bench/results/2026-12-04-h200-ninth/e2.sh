#!/usr/bin/env bash
# Ninth session, call 2: the recurrent forward staging its inputs in workgroup memory (built in: 32
# row lanes, STAGE 16; GDN_KERNEL_DIR s32-8/-32: other stages; s8, s8-4, s8-8: 8 row lanes), against
# d5a7471's (old) and call 1's unstaged 8-lane (f8); the conv kernels one token an invocation for
# short batches (built in); S4 and S1 with per-kernel profiles; odd head sizes.
set -u
O=${OUT:-out}; W=/tmp/e2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e2.tgz -C /tmp e2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
run s4-s32 60 $B/gdn-check run $S4
run stats-s32 60 $B/gdn-check kernel-stats --kernel recurrence_forward
for v in s32-8 s32-32 s8 s8-4 s8-8 old f8; do
  GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4
  GDN_KERNEL_DIR=.dev/kv/$v run stats-$v 60 $B/gdn-check kernel-stats --kernel recurrence_forward
done
run s4-tc 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --precision tensor-core
for d in 24 80 192 8 256; do run s4-d$d 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk $d --dv $d --batch 3 --seq 100 --repeat 5 --family recurrent; done
pack
S1="--preset qwen3-next --batch 8 --seq 1024 --repeat 3 --family recurrent --profile"
run s1-s32 100 $B/gdn-check run $S1
for v in s8-4 s8-8 s32-8 old; do GDN_KERNEL_DIR=.dev/kv/$v run s1-$v 100 $B/gdn-check run $S1; done
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
