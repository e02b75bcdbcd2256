#!/usr/bin/env bash
# Session 7, call 1 (binary of the decode step per (sequence, value head); gdn-check-old: 4ceabd7,
# the step per (sequence, key head)): the decode step, new against old in one run, at 8 and 64
# sequences of qwen3-next (one at a time and streamed), 4 tokens a step, and four head sizes; the
# decode device test; S4 per-kernel profiles of the three families. Into $OUT/c1.tgz.
set -u
O=${OUT:-out}; W=/tmp/c1; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c1.tgz -C /tmp c1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $W/gpu.txt 2>&1
for i in 1 2; do
  run new-n8-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
  run old-n8-$i 30 $B/gdn-check-old decode --preset qwen3-next --sequences 8 --steps 200
done
run new-n64 30 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
run old-n64 30 $B/gdn-check-old decode --preset qwen3-next --sequences 64 --steps 200
run new-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
run new-n1 30 $B/gdn-check decode --preset qwen3-next --sequences 1 --steps 200
for d in 8 64 160 256; do run new-d$d 30 $B/gdn-check decode --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 20; done
run old-d256 30 $B/gdn-check-old decode --nk 2 --nv 4 --dk 256 --dv 256 --sequences 64 --steps 20
echo "decode after $((SECONDS-t0)) s" > $W/progress.txt; pack
run test-decode 90 $B/test-gdn-check-decode --nocapture
echo "test after $((SECONDS-t0)) s" >> $W/progress.txt; pack
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-tc 60 $B/gdn-check run $S4 --family chunked --precision tensor-core
run s4-f32 60 $B/gdn-check run $S4 --family chunked
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
