#!/usr/bin/env bash
# Fifteenth session, call 1: the conv inside the q/k norms' dispatches (forward and backward) and the gates'
# backward inside qk_norm_backward's, against 7a0df3d's binary, alternating; the forward staging
# 24 tokens (dk 128) and 12 (dk 256) as overrides; S1 (chunked) old/new; fla's S4; then the device
# suite and campaigns on the new binary.
set -u
O=${OUT:-out}; W=/tmp/f1; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/f1.tgz -C /tmp f1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
D256="--preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state"
for r in 1 2 3; do
run s4-old-$r 60 $B/gdn-check-7a0df3d run $S4 --checkpoint-interval 4
run s4-new-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/stage24 run s4-new-stage24-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
done
pack
run s4-new-i32 60 $B/gdn-check run $S4
GDN_KERNEL_DIR=.dev/bis/stage24 run s4-new-stage24-i32 60 $B/gdn-check run $S4
run d256-old 60 $B/gdn-check-7a0df3d run $D256 --checkpoint-interval 4
run d256-new 60 $B/gdn-check run $D256 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/stage24 run d256-new-stage12 60 $B/gdn-check run $D256 --checkpoint-interval 4
run s4-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family auto
run s1-old 120 $B/gdn-check-7a0df3d run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
run s1-new 120 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
echo "timings after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fla-fwd 150 python3 .dev/fla_bench.py fwd 1 128 2 4 bfloat16
run fla-bwd 150 python3 .dev/fla_bench.py bwd 1 128 2 4 bfloat16
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 48 --jobs 8 --family recurrent
run fuzz-all 90 $B/gdn-check fuzz --cases 150 --seed 49 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
