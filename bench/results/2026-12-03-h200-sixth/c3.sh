#!/usr/bin/env bash
# Session 6, call 3 (binary dfcfc65, decode_step with two barriers a token): the candidate "prefetch"
# (each tile's first-token gates, v columns and norm factor loaded a tile ahead, with the state)
# against the built kernel (plain), through GDN_KERNEL_DIR: qwen3-next at 8 and 64 sequences and 4
# tokens a step, and dk = dv = 8 and 256 (nk 2, nv 4, 64 sequences). Into $OUT/c3.tgz.
set -u
O=${OUT:-out}; W=/tmp/c3; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c3.tgz -C /tmp c3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for v in plain prefetch; do
  for i in 1 2; do
    GDN_KERNEL_DIR=.dev/kv/$v run $v-n8-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
  done
  GDN_KERNEL_DIR=.dev/kv/$v run $v-n64 30 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
  GDN_KERNEL_DIR=.dev/kv/$v run $v-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
  for d in 8 256; do
    GDN_KERNEL_DIR=.dev/kv/$v run $v-d$d 30 $B/gdn-check decode --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 50
  done
done
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
