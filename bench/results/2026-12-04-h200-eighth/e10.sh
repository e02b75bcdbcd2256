#!/usr/bin/env bash
# The decode step as committed: the decode tests (the shuffle kernel's included), new against old
# (gdn-check-old = 8e3e564) and fla's fused recurrent decode in one run; the portable kernel; head sizes.
set -u
O=${OUT:-out}; W=/tmp/e10; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e10.tgz -C /tmp e10; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
timeout 200 python3 bench/fla_decode.py 8 > $W/fla-compile.txt 2>&1 &
run test-decode 150 $B/test-decode --include-ignored --nocapture
run stats 60 $B/gdn-check kernel-stats --kernel decode_step
pack
wait
for n in 8 1 64; do run fla-n$n 120 python3 bench/fla_decode.py $n; done
for i in 1 2; do for n in 8 1 64; do
  run new-n$n-$i 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200
  run old-n$n-$i 30 .dev/gdn-check-old decode --preset qwen3-next --sequences $n --steps 200
done; done
pack
run new-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 100 --tokens 4
GDN_KERNEL_DIR=.dev/kv/portable run portable-n8 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 100
for d in 8 64 256; do run new-d$d 30 $B/gdn-check decode --preset qwen3-next --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 100; done
for p in qwen3.5-small qwen3.5-27b qwen3.5-large; do run new-$p 30 $B/gdn-check decode --preset $p --sequences 64 --steps 100; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
