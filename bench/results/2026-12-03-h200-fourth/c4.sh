#!/usr/bin/env bash
# Session 4, call 4 (binary of the recall example): the recall test and a bigger recall run on the
# GPU, and the decode step timed three times at 8 and 64 sequences (the 64-sequence figure moved
# 3.4x across calls 1-3). All into $OUT/c4.tgz.
set -u
O=${OUT:-out}; W=/tmp/c4; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c4.tgz -C /tmp c4; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem --format=csv > $W/gpu.txt 2>&1
run recall-test 60 $B/test-gdn-check-recall --nocapture
run recall-default 90 $B/gdn-check recall --every 100 --chart $W/recall-default.png
pack
run recall-big 150 $B/gdn-check recall --pairs 16 --values 64 --batch 64 --steps 1500 --every 100 --chart $W/recall-big.png
pack
for i in 1 2 3; do
  run decode-n8-$i 20 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
  run decode-n64-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> $W/gpu.txt 2>&1
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
