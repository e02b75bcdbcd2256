#!/usr/bin/env bash
# Thirteenth session's first call (written while no device was lent). At HEAD, beside the same
# binary with c833c7d's three few-head kernels as GDN_KERNEL_DIR overrides (c833c7d/: the forward
# and backward recurrences that sum the key products over the rows, and the q/k norm without them,
# under the name HEAD dispatches): S4 (both profiles) and S4 at interval 4 (no replay), dk = 256,
# 6dddcc5's column backward (twelfth/), timing-only variants (.dev/variants), intervals at S4 and 1 x 1024, the pick, S1 chunked (the
# shared row_sum4), fla's S4 beside, the device suite, campaigns.
set -u
O=${OUT:-out}; W=/tmp/e3; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e3.tgz -C /tmp e3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
OLD=bench/results/2026-12-04-h200-thirteenth/c833c7d
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
D256="--preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state"
run s4 60 $B/gdn-check run $S4
# The shuffle twins of the changed kernels at odd shapes (lavapipe runs only the portable ones).
for i in 13 4 3 1; do run odd-i$i 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 24 --dv 48 --batch 2 --seq 37 --state --checkpoint-interval $i --family recurrent --repeat 1; done
run odd-kk6 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 3 --dk 32 --dv 16 --kk 6 --batch 3 --seq 20 --family recurrent --repeat 1
GDN_KERNEL_DIR=$OLD run s4-c833c7d 60 $B/gdn-check run $S4
run s4-i4 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=$OLD run s4-i4-c833c7d 60 $B/gdn-check run $S4 --checkpoint-interval 4
run d256 60 $B/gdn-check run $D256
GDN_KERNEL_DIR=$OLD run d256-c833c7d 60 $B/gdn-check run $D256
GDN_KERNEL_DIR=bench/results/2026-12-04-h200-twelfth/6dddcc5 run s4-6dddcc5-bwd 60 $B/gdn-check run $S4
# Where a chunk's time goes now: timing-only variants of HEAD's kernels (make_variants.py wrote
# them into .dev/variants; wrong by design).
for v in fnosum fnostage fnostore bnosum bnobar bnorep; do GDN_KERNEL_DIR=.dev/variants/$v run s4-$v 60 $B/gdn-check run $S4; done
run stats 60 $B/gdn-check kernel-stats --kernel recurrence_
GDN_KERNEL_DIR=$OLD run stats-c833c7d 60 $B/gdn-check kernel-stats --kernel recurrence_
pack
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
for i in 16 64 128; do run s4-i$i 60 $B/gdn-check run $S4 --checkpoint-interval $i; done
run s4-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family auto
for i in 4 32 128 256; do run t1024-i$i 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --checkpoint-interval $i; done
run s1-chunked 120 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
wait
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
run s4-again 60 $B/gdn-check run $S4
GDN_KERNEL_DIR=$OLD run s4-c833c7d-again 60 $B/gdn-check run $S4
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 44 --jobs 8 --family recurrent
run fuzz-all 60 $B/gdn-check fuzz --cases 150 --seed 45 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
