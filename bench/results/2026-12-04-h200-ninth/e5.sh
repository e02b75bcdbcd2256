#!/usr/bin/env bash
# Ninth session, call 5: the 4-token solve with the tokens as vec4 components (built in, STAGE 8; v16: STAGE 16)
# against the per-token staged kernel (s32, call 2) and d5a7471's (old): S4 and S1 with profiles,
# register counts, odd head sizes and checkpoint intervals.
set -u
O=${OUT:-out}; W=/tmp/e5; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz && tar xJf gc.tar.xz)
pack() { tar czf $O/e5.tgz -C /tmp e5; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
run s4-chunk 60 $B/gdn-check run $S4
run stats-chunk 60 $B/gdn-check kernel-stats --kernel recurrence_forward
for v in v16 s32 old; do
  GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4
done
GDN_KERNEL_DIR=.dev/kv/v16 run stats-v16 60 $B/gdn-check kernel-stats --kernel recurrence_forward
run s4-chunk-2 60 $B/gdn-check run $S4
for d in 8 24 80 192 256; do run s4-d$d 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk $d --dv $d --batch 3 --seq 100 --repeat 5 --family recurrent --state --reference-sequences 3; done
for ci in 1 5 13; do run ci$ci 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk 48 --dv 32 --batch 3 --seq 77 --repeat 3 --family recurrent --checkpoint-interval $ci --state --reference-sequences 3; done
pack
S1="--preset qwen3-next --batch 8 --seq 1024 --repeat 3 --family recurrent --profile"
run s1-chunk 100 $B/gdn-check run $S1
for v in old; do GDN_KERNEL_DIR=.dev/kv/$v run s1-$v 100 $B/gdn-check run $S1; done
pack
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
