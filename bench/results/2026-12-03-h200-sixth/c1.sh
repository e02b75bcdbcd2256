#!/usr/bin/env bash
# Session 6, call 1 (binary f7136cc: the decode step as one dispatch, decode_step; WindowedTape in
# the caller's buffers; gdn-check run through a WindowedTape past the binding limits, spot-checked;
# tensor-core bars widened by each dℓ's own cancellation): the decode step timed at 8 and 64
# sequences (three runs each, and 4 tokens a step), at six head sizes, and its device test; the
# windowed and spot-check tests; the device suite with the tensor-core test; the recurrent family at
# T = 2000, dk = dv = 128 (wrong on Mesa 22's lavapipe); the 1 000-case tensor-core campaign of seed
# 13 (the 3-token dℓ case); qwen3-next at T = 65 536 in f32, spot-checked. All into $OUT/c1.tgz.
set -u
O=${OUT:-out}; W=/tmp/c1; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c1.tgz -C /tmp c1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,memory.total --format=csv > $W/gpu.txt 2>&1
free -g > $W/host.txt 2>&1
for i in 1 2 3; do
  run decode-n8-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
  run decode-n64-$i 40 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
done
run decode-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
for d in 8 32 64 128 256; do
  run sizes-decode-d$d 30 $B/gdn-check decode --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 20
done
run test-decode 90 $B/test-gdn-check-decode --nocapture
echo "decode after $((SECONDS-t0)) s" > $W/progress.txt; pack
for t in windowed spot_check; do run test-$t 60 $B/test-gdn-check-$t --nocapture; done
run recurrent-t2000 60 $B/gdn-check run --preset qwen3.5-small --seq 2000 --nk 1 --nv 1 --family recurrent --repeat 1
echo "tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run device-suite 170 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "suite after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz-tc-seed13 110 $B/gdn-check fuzz --cases 1000 --seed 13 --jobs 6 --precision tensor-core --family chunked
echo "campaign after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run next-t65536-f32 140 $B/gdn-check run --preset qwen3-next --seq 65536 --reference-heads 1 --repeat 3
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
