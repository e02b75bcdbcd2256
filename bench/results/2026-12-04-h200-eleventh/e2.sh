#!/usr/bin/env bash
# Eleventh session, call 2: timing-only variants of the one-column-a-warp kernels (GDN_KERNEL_DIR;
# results wrong by design): what each part of a chunk / step costs at S4.
set -u
O=${OUT:-out}; W=/tmp/e2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e2.tgz -C /tmp e2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for v in base fnostore fnosum fnostage fall fstage8 fstage32 bnobar bnosum bnorep bnostore ball bnoidx base; do
  GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4
done
run stats-bnobar 60 env GDN_KERNEL_DIR=.dev/kv/bnobar $B/gdn-check kernel-stats --kernel recurrence_backward_columns
pack
