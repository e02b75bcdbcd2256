#!/usr/bin/env bash
set -u
O=${OUT:-out}; W=/tmp/e2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e2.tgz -C /tmp e2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for v in c1 c2 c4; do GDN_KERNEL_DIR=.dev/kv/$v run stats-$v 60 $B/gdn-check kernel-stats --kernel decode_step; done
pack
for n in 1 8 64; do
  for v in c1 c2 c4; do GDN_KERNEL_DIR=.dev/kv/$v run $v-n$n 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 100; done
done
pack
for v in c1 c2 c4; do GDN_KERNEL_DIR=.dev/kv/$v run $v-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4; done
for v in c1 c2 c4; do GDN_KERNEL_DIR=.dev/kv/$v GDN_BOUNDS_CHECKS=0 run nb-$v-n8 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 100; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
