#!/usr/bin/env bash
# Eighteenth session, call 1. S4 (interval 4), alternating, three rounds: 2f21a31 (the fifteenth
# session's last measured), 5facd95 (the sixteenth: S4's backward in 3 dispatches), 02736b6 (the
# seventeenth: deferred lane sums), 02736b6 with the recurrent forward's stages loaded by warps of
# their own (.dev/bis/loaders: 78eaed4's kernel as a GDN_KERNEL_DIR override), HEAD (7f3e48c: that
# forward computing its own inputs, two dispatches), and HEAD capped at 15 storage buffers (the
# inputs' dispatch back, loading warps kept). Then timing-only overrides (results wrong by design:
# a kernel's dispatch kept, its work skipped: empty-cqkf on 02736b6, empty-norm on HEAD), interval
# 32, fla's S4 graph figures, the registers, the device suite, dk 256, auto, 1 x 1024, S1, the other
# device tests and two campaigns on HEAD's binaries. Packs $OUT/g1.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g1; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g1.tgz -C /tmp g1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
D256="--preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state --checkpoint-interval 4"
for r in 1 2 3; do
run s4-old-$r 60 $B/gdn-check-2f21a31 run $S4 --checkpoint-interval 4
run s4-six-$r 60 $B/gdn-check-5facd95 run $S4 --checkpoint-interval 4
run s4-sev-$r 60 $B/gdn-check-02736b6 run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/loaders run s4-sevload-$r 60 $B/gdn-check-02736b6 run $S4 --checkpoint-interval 4
run s4-new-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_MAX_STORAGE_BUFFERS=15 run s4-cap15-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
done
echo "s4 after $((SECONDS-t0)) s" > $W/progress.txt; pack
for r in 1 2; do
GDN_KERNEL_DIR=.dev/bis/empty-cqkf run s4-empty-cqkf-$r 60 $B/gdn-check-02736b6 run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/empty-norm run s4-empty-norm-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
run s4-sev-i32-$r 60 $B/gdn-check-02736b6 run $S4
run s4-new-i32-$r 60 $B/gdn-check run $S4
done
echo "overrides after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fla-fwd 150 python3 .dev/fla_bench.py fwd 1 128 2 4 bfloat16
run fla-bwd 150 python3 .dev/fla_bench.py bwd 1 128 2 4 bfloat16
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run stats 60 $B/gdn-check kernel-stats
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "suite after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run d256-sev 60 $B/gdn-check-02736b6 run $D256
GDN_KERNEL_DIR=.dev/bis/loaders run d256-sevload 60 $B/gdn-check-02736b6 run $D256
run d256-new 60 $B/gdn-check run $D256
run s4-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family auto
run t1024-new 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --checkpoint-interval 4 --profile
run s1-new 120 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
echo "timings after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 90 --jobs 8 --family recurrent
run fuzz-all 90 $B/gdn-check fuzz --cases 150 --seed 91 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
