#!/usr/bin/env bash
# Ninth session, call 3: the recurrent forward solved 8 tokens at a time (built in; c32: STAGE 32)
# against the per-token staged kernel (s32, call 2) and d5a7471's (old): S4 and S1 with profiles,
# register counts, odd head sizes and checkpoint intervals; the device suite's reference tests.
set -u
O=${OUT:-out}; W=/tmp/e3; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e3.tgz -C /tmp e3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
run s4-chunk 60 $B/gdn-check run $S4
run stats-chunk 60 $B/gdn-check kernel-stats --kernel recurrence_forward
for v in c32 s32 old; do
  GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4
done
GDN_KERNEL_DIR=.dev/kv/c32 run stats-c32 60 $B/gdn-check kernel-stats --kernel recurrence_forward
run s4-chunk-2 60 $B/gdn-check run $S4
for d in 8 24 80 192 256; do run s4-d$d 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk $d --dv $d --batch 3 --seq 100 --repeat 5 --family recurrent --state --reference-sequences 3; done
for ci in 1 5 13; do run ci$ci 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk 48 --dv 32 --batch 3 --seq 77 --repeat 3 --family recurrent --checkpoint-interval $ci --state --reference-sequences 3; done
pack
S1="--preset qwen3-next --batch 8 --seq 1024 --repeat 3 --family recurrent --profile"
run s1-chunk 100 $B/gdn-check run $S1
for v in old s32; do GDN_KERNEL_DIR=.dev/kv/$v run s1-$v 100 $B/gdn-check run $S1; done
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
