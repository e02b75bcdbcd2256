#!/usr/bin/env bash
# Ninth session, call 1: the recurrent forward with 8, 16 or 32 row lanes a column group and the
# transposed row-lane sums (GDN_KERNEL_DIR f8/f16; f32 = built in), against the previous binary
# (old = d5a7471's WGSL through GDN_KERNEL_DIR), at S4 and S1; odd head sizes through the 32-lane kernel; the decode step with
# the transposed sums against the previous one; the two tests fixed last session; fla's S4.
set -u
O=${OUT:-out}; W=/tmp/e1; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e1.tgz -C /tmp e1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
GDN_KERNEL_DIR=.dev/kv/old run s4-old 60 $B/gdn-check run $S4
run s4-f32 60 $B/gdn-check run $S4
for v in f8 f16; do GDN_KERNEL_DIR=.dev/kv/$v run s4-$v 60 $B/gdn-check run $S4; done
run stats-f32 60 $B/gdn-check kernel-stats --kernel recurrence_forward
for v in f8 f16; do GDN_KERNEL_DIR=.dev/kv/$v run stats-$v 60 $B/gdn-check kernel-stats --kernel recurrence_forward; done
for d in 24 80 192; do run s4-d$d 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --dk $d --dv $d --batch 2 --seq 100 --repeat 5 --family recurrent; done
pack
for i in 1 2; do for n in 8 1 64; do
  run dec-new-n$n-$i 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200
  GDN_KERNEL_DIR=.dev/kv/old run dec-old-n$n-$i 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200
done; done
run test-errors 60 $B/test-gdn-train-errors --include-ignored
run test-adopted 60 $B/test-gdn-train-adopted_device --include-ignored
run test-decode 120 $B/test-gdn-check-decode --include-ignored
pack
S1="--preset qwen3-next --batch 8 --seq 1024 --repeat 3 --family recurrent --profile"
GDN_KERNEL_DIR=.dev/kv/old run s1-old 100 $B/gdn-check run $S1
run s1-f32 100 $B/gdn-check run $S1
for v in f8 f16; do GDN_KERNEL_DIR=.dev/kv/$v run s1-$v 100 $B/gdn-check run $S1; done
pack
wait
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
