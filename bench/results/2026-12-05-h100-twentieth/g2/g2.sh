#!/usr/bin/env bash
# Twentieth session, call 2. Which family trains short sequences in many heads faster: the tape
# picks the chunked family wherever the recurrent backward cannot spread a head's columns over
# workgroups (many heads), e.g. B = 64, T = 1 (chunk 1). Each shape with the family the tape picks,
# the recurrent family and the chunked one; then every head size at B = 64, T = 1 in the recurrent
# family (call 1 ran them as picked). Packs $OUT/g2.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g2.tgz -C /tmp g2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name --format=csv > $W/gpu.txt 2>&1
R="--repeat 10 --profile"
for shape in "64 1" "64 4" "64 16" "32 64" "16 128" "8 256"; do
set -- $shape; b=$1; t=$2
for f in auto recurrent chunked; do
run next-$b-$t-$f 60 $B/gdn-check run --preset qwen3-next --batch $b --seq $t --family $f $R
done
pack
done
for shape in "64 1" "64 16" "8 128"; do
set -- $shape; b=$1; t=$2
for f in auto recurrent chunked; do
run s4h-$b-$t-$f 60 $B/gdn-check run --nk 2 --nv 4 --batch $b --seq $t --family $f $R
done
done
echo "shapes after $((SECONDS-t0)) s" > $W/progress.txt; pack
for d in 8 16 24 32 48 64 80 96 128 160 192 256; do
run sizes-$d-b64-recurrent 40 $B/gdn-check run --nk 2 --nv 4 --dk $d --dv $d --batch 64 --seq 1 --family recurrent $R
done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
