#!/usr/bin/env bash
set -u
O=${OUT:-out}; W=/tmp/e8; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e8.tgz -C /tmp e8; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for v in p5 d3; do GDN_KERNEL_DIR=.dev/kv/$v run stats-$v 60 $B/gdn-check kernel-stats --kernel decode_step; done
for i in 1 2; do for n in 8 1 64; do
  for v in p5 d3; do GDN_KERNEL_DIR=.dev/kv/$v run $v-n$n-$i 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200; done
done; done
GDN_KERNEL_DIR=.dev/kv/p5 run p5-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 100 --tokens 4
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
