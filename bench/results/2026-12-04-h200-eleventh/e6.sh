#!/usr/bin/env bash
# Eleventh session, call 6: the column backward at four columns a workgroup with dq̂ then dk̂ shares
# (four barriers a chunk; the committed kernel) beside call 4's vec2 shares (two barriers; a
# GDN_KERNEL_DIR override at 128 × 128, same host geometry): S4, dk = 256, the device suite and
# campaigns on the committed kernel.
set -u
O=${OUT:-out}; W=/tmp/e6; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e6.tgz -C /tmp e6; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
run s4 60 $B/gdn-check run $S4
run s4-vec2 60 env GDN_KERNEL_DIR=.dev/kv/vec2 $B/gdn-check run $S4
run s4-b 60 $B/gdn-check run $S4
run s4-vec2-b 60 env GDN_KERNEL_DIR=.dev/kv/vec2 $B/gdn-check run $S4
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run t1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --profile
run stats 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fuzz 100 $B/gdn-check fuzz --cases 400 --seed 28 --jobs 8 --family recurrent
run fuzz-all 80 $B/gdn-check fuzz --cases 200 --seed 29 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
