#!/usr/bin/env bash
# Sixteenth session's kernels, call 1 (written without a device; run it in a later session): the
# backward's last three dispatches made one (the conv's input gradient with the parameter sums'
# totals in one pass) and the gated RMSNorm's backward inside the column backward: S4's backward
# 6 -> 3 dispatches. HEAD's binary against 2f21a31's (the fifteenth session's last), alternating,
# and HEAD's on devices capped by GDN_MAX_STORAGE_BUFFERS (the plan's ladder: 16 keeps
# norm_backward, 14 also the sums' partials and totals apart, 12 also the conv apart); fla's S4
# beside them; the fifteenth session's timing-only overrides (sgsum, kwin, both); S1, dk 256,
# 1 x 1024; then the device suite and campaigns on HEAD's binary.
set -u
O=${OUT:-out}; W=/tmp/g1; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g1.tgz -C /tmp g1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
D256="--preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state --checkpoint-interval 4"
for r in 1 2 3; do
run s4-old-$r 60 $B/gdn-check-2f21a31 run $S4 --checkpoint-interval 4
run s4-new-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
for cap in 16 14 12; do GDN_MAX_STORAGE_BUFFERS=$cap run s4-cap$cap-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4; done
done
pack
for r in 1 2; do
GDN_KERNEL_DIR=.dev/bis/sgsum run s4-sgsum-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/kwin run s4-kwin-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/both run s4-both-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
run s4-old-i32-$r 60 $B/gdn-check-2f21a31 run $S4
run s4-new-i32-$r 60 $B/gdn-check run $S4
done
run fla-fwd 150 python3 .dev/fla_bench.py fwd 1 128 2 4 bfloat16
run fla-bwd 150 python3 .dev/fla_bench.py bwd 1 128 2 4 bfloat16
echo "s4 and fla after $((SECONDS-t0)) s" > $W/progress.txt; pack
run d256-old 60 $B/gdn-check-2f21a31 run $D256
run d256-new 60 $B/gdn-check run $D256
run s4-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family auto
run t1024-old 60 $B/gdn-check-2f21a31 run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --checkpoint-interval 4 --profile
run t1024-new 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --checkpoint-interval 4 --profile
run s1-old 120 $B/gdn-check-2f21a31 run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
run s1-new 120 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
run stats 60 $B/gdn-check kernel-stats
echo "timings after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 90 --jobs 8 --family recurrent
run fuzz-all 90 $B/gdn-check fuzz --cases 150 --seed 91 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
