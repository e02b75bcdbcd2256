#!/usr/bin/env bash
# Session 7, call 2 (binary of call 1): decode_step taken apart through GDN_KERNEL_DIR variants of
# the (sequence, value head) kernel (.dev/kv7/NAME: the tile per thread, threads per workgroup, no
# state traffic, no conv shift, an empty kernel), at 1, 8 and 64 sequences; bounds checks off.
set -u
O=${OUT:-out}; W=/tmp/c2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c2.tgz -C /tmp c2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for v in built t32 t16 v512 v1024 nostate noshift empty; do
  for n in 1 8 64; do
    GDN_KERNEL_DIR=.dev/kv7/$v run $v-n$n 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 100
  done
  echo "$v after $((SECONDS-t0)) s" >> $W/progress.txt
done
pack
for n in 1 8 64; do GDN_BOUNDS_CHECKS=0 run nobounds-n$n 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 100; done
for n in 1 64; do run old-n$n 30 $B/gdn-check-old decode --preset qwen3-next --sequences $n --steps 100; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
