#!/usr/bin/env bash
set -u
O=${OUT:-out}; W=/tmp/e6; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e6.tgz -C /tmp e6; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
timeout 200 python3 bench/fla_decode.py 8 > $W/fla-compile.txt 2>&1 &
run test-decode 120 $B/test-decode --nocapture
run stats 60 $B/gdn-check kernel-stats --kernel decode_step
for v in p2 d3; do GDN_KERNEL_DIR=.dev/kv/$v run stats-$v 60 $B/gdn-check kernel-stats --kernel decode_step; done
pack
wait
for i in 1 2; do for n in 8 1 64; do
  run new-n$n-$i 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200
  for v in p2 d3; do GDN_KERNEL_DIR=.dev/kv/$v run $v-n$n-$i 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200; done
done; done
pack
for n in 8 1 64; do run fla-n$n 120 python3 bench/fla_decode.py $n; done
run new-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 100 --tokens 4
GDN_KERNEL_DIR=.dev/kv/p2 run p2-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 100 --tokens 4
GDN_KERNEL_DIR=.dev/kv/portable run portable-n8 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 100
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
