#!/usr/bin/env bash
# Twelfth session's next call (not run: the device stopped being lent after call 1). At HEAD:
# S4 (both profiles), 6dddcc5's column backward as an override (was 950732f's 72 us its run-time
# indexing or the shared loader?), checkpoint intervals (4: no replay) at S4 and 1 x 1024, dk = 256,
# S1 chunked, fla's S4 beside, the device suite, campaigns.
set -u
O=${OUT:-out}; W=/tmp/e2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e2.tgz -C /tmp e2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
run s4 60 $B/gdn-check run $S4
GDN_KERNEL_DIR=bench/results/2026-12-04-h200-twelfth/6dddcc5 run s4-6dddcc5-bwd 60 $B/gdn-check run $S4
for i in 4 16 64 128; do run s4-i$i 60 $B/gdn-check run $S4 --checkpoint-interval $i; done
run s4-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family auto
pack
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
for i in 4 32 128 256; do run t1024-i$i 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --checkpoint-interval $i; done
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run s1-chunked 120 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
wait
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
run s4-again 60 $B/gdn-check run $S4
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 42 --jobs 8 --family recurrent
run fuzz-all 60 $B/gdn-check fuzz --cases 150 --seed 43 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
