#!/usr/bin/env bash
# Tenth session, call 2: the column-group recurrent backward (32 row lanes, one workgroup per
# 4 columns, the next step's inputs and saved state loaded ahead) at S4 and other few-head shapes,
# its registers, variants (kv/norep: no replay; kv/nodg: no dℓ sum; timing only), the device suite
# with the ignored tests, a 500-case recurrent fuzz campaign.
set -u
O=${OUT:-out}; W=/tmp/e2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e2.tgz -C /tmp e2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
run stats 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns
run stats256 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns --dk 256 --dv 256
for v in norep nodg; do GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4 --family recurrent; done
run s4-rec-state 60 $B/gdn-check run $S4 --family recurrent --state --checkpoint-interval 13
run t512 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 512 --repeat 10 --family recurrent --profile
run t512-f32 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 512 --repeat 10 --family chunked --profile
run b4 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 4 --seq 128 --repeat 10 --family recurrent --profile
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run d48 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk 24 --dv 48 --batch 2 --seq 100 --repeat 10 --family recurrent --state
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fuzz 120 $B/gdn-check fuzz --cases 500 --seed 12 --jobs 8 --family recurrent
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
