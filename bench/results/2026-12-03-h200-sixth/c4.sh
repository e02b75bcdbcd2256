#!/usr/bin/env bash
# Session 6, call 4 (binary 4ceabd7: decode_step with its tiles' inputs loaded ahead; gdn-check decode
# also timing 100 steps back to back in one pass): the decode step at 8 and 64 sequences of
# qwen3-next, 4 tokens a step, and dk = dv = 8 and 256, with the SM and memory clocks sampled every
# 50 ms (nvidia-smi). Into $OUT/c4.tgz.
set -u
O=${OUT:-out}; W=/tmp/c4; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c4.tgz -C /tmp c4; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; echo "== $name at $(date +%T.%N)" >> $W/marks.txt; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 50 > $W/clocks.txt 2>&1 &
P=$!
sleep 1
for i in 1 2; do run n8-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200; done
run n64 30 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
run n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
for d in 8 256; do run d$d 30 $B/gdn-check decode --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 20; done
sleep 1
kill $P
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
