#!/usr/bin/env bash
# Eleventh session, call 5: eight columns a workgroup for the backward again (dq̂ then dk̂ shares), qk_norm_backward summing
# its partials once, gates_backward four partials a round: S4 with and without bounds checks,
# other few-head shapes, the device suite, campaigns, fla's S4.
set -u
O=${OUT:-out}; W=/tmp/e5; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e5.tgz -C /tmp e5; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
run s4-nobounds 60 env GDN_BOUNDS_CHECKS=0 $B/gdn-check run $S4 --family recurrent
(nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw --format=csv -lms 20 > $W/clocks.txt 2>&1 &) ; sleep 0.5
run s4-clock 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 200 --family recurrent
pkill -f "nvidia-smi --query" || true
run stats 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns
run stats256 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns --dk 256 --dv 256
run s4-rec-state 60 $B/gdn-check run $S4 --family recurrent --state --checkpoint-interval 13
run t256 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 256 --repeat 10 --family recurrent --profile
run t512 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 512 --repeat 10 --family recurrent --profile
run b4 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 4 --seq 128 --repeat 10 --family recurrent --profile
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run d48 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk 24 --dv 48 --batch 2 --seq 100 --repeat 10 --family recurrent --state
run t1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --profile
run auto1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family auto
pack
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
wait
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
run s4-rec-2 60 $B/gdn-check run $S4 --family recurrent
run s4-tc 60 $B/gdn-check run $S4 --precision tensor-core
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 120 $B/gdn-check fuzz --cases 500 --seed 26 --jobs 8 --family recurrent
run fuzz-all 100 $B/gdn-check fuzz --cases 300 --seed 27 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
