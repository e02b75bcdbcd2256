#!/usr/bin/env bash
# Session 5, call 3 (binary 1013b50: the decode step split over column blocks, typed staging OOM):
# every bundled device test binary (the device suite with the tensor-core test); the decode step
# timed three times at 8 and 64 sequences (and 4 tokens a step at 8); every supported head size at
# B = 64, T = 1 (the default family: the recurrent one) and at S4's heads (B = 1, T = 128), forward
# and backward against gdn-ref; decode at every head size. All into $OUT/c3.tgz.
set -u
O=${OUT:-out}; W=/tmp/c3; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c3.tgz -C /tmp c3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv > $W/gpu.txt 2>&1
for i in 1 2 3; do
  run decode-n8-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
  run decode-n64-$i 40 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
done
run decode-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
echo "decode after $((SECONDS-t0)) s" > $W/progress.txt; pack
run device-suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do
  case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 60 $t --nocapture ;; esac
done
echo "tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for d in 8 16 24 32 48 64 80 96 128 160 192 256; do
  run sizes-b64t1-d$d 30 $B/gdn-check run --nk 2 --nv 4 --dk $d --dv $d --batch 64 --seq 1 --repeat 5 --reference-sequences 4
  run sizes-s4-d$d 30 $B/gdn-check run --nk 2 --nv 4 --dk $d --dv $d --batch 1 --seq 128 --repeat 5
  run sizes-decode-d$d 30 $B/gdn-check decode --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 20
done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
