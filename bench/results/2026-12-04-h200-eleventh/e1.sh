#!/usr/bin/env bash
# Eleventh session, call 1: one column a warp in both few-head recurrent kernels (8 columns, 256
# invocations a workgroup; the backward's replay four steps a round): S4 and other few-head shapes
# beside fla's S4, registers, the device suite with the ignored tests, a recurrent fuzz campaign.
set -u
O=${OUT:-out}; W=/tmp/e1; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e1.tgz -C /tmp e1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
run stats 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns
run stats-f 60 $B/gdn-check kernel-stats --kernel recurrence_forward_chunks
run stats256 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns --dk 256 --dv 256
run stats256-f 60 $B/gdn-check kernel-stats --kernel recurrence_forward_chunks --dk 256 --dv 256
run s4-rec-state 60 $B/gdn-check run $S4 --family recurrent --state --checkpoint-interval 13
run t512 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 512 --repeat 10 --family recurrent --profile
run t256 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 256 --repeat 10 --family recurrent --profile
run b4 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 4 --seq 128 --repeat 10 --family recurrent --profile
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run d48 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk 24 --dv 48 --batch 2 --seq 100 --repeat 10 --family recurrent --state
run t1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --profile
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
wait
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
run s4-rec-2 60 $B/gdn-check run $S4 --family recurrent
run s4-tc 60 $B/gdn-check run $S4 --precision tensor-core
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 120 $B/gdn-check fuzz --cases 500 --seed 21 --jobs 8 --family recurrent
run fuzz-all 100 $B/gdn-check fuzz --cases 300 --seed 22 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
