#!/usr/bin/env bash
# Session 7, call 5 (HEAD's binary: the decode step as built, column sums of short batches in 16
# blocks, the picked chunk set for the batch): fla's S4 (bf16, graph) beside ours (family and chunk
# picked by the tape, both precisions, and the recurrent family) in one run; the decode step at 8
# and 64 sequences; the decode test and the device suite with the tensor-core test. Into $OUT/c5.tgz.
set -u
O=${OUT:-out}; W=/tmp/c5; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c5.tgz -C /tmp c5; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
run test-decode 90 $B/test-gdn-check-decode --nocapture
run device-suite 170 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
wait
echo "fla compiled, tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-tc 60 $B/gdn-check run $S4 --precision tensor-core
run s4-f32 60 $B/gdn-check run $S4
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
for i in 1 2; do run decode-n8-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200; done
run decode-n64 30 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
