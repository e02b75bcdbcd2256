#!/usr/bin/env bash
# Session 7, call 4 (binary of the decode step with 16 state elements a thread and conv windows
# written from registers; gdn-check-old: 4ceabd7; .dev/kv8/t16: the same tiling without the
# register windows): the decode step, new against old and against kv8/t16, in one run; the decode
# test; fla's S4 (bf16 graph) beside ours at chunks 32 and 64 in both precisions; chunks 32 and 64
# at S1 and at 1 × 256, 1 × 512 (nk 2, nv 4). Into $OUT/c4.tgz.
set -u
O=${OUT:-out}; W=/tmp/c4; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c4.tgz -C /tmp c4; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
D="decode --preset qwen3-next --steps 100"
for n in 1 8 64; do run new-n$n 30 $B/gdn-check $D --sequences $n; done
run new-n8-2 30 $B/gdn-check $D --sequences 8
for n in 8 64; do run old-n$n 30 $B/gdn-check-old $D --sequences $n; GDN_KERNEL_DIR=.dev/kv8/t16 run t16-n$n 30 $B/gdn-check $D --sequences $n; done
run new-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
for d in 8 64 256; do run new-d$d 30 $B/gdn-check decode --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 20; done
echo "decode after $((SECONDS-t0)) s" > $W/progress.txt; pack
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
run test-decode 90 $B/test-gdn-check-decode --nocapture
wait
echo "fla compiled, test after $((SECONDS-t0)) s" >> $W/progress.txt; pack
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family chunked"
for c in 32 64; do run s4-tc-c$c 60 $B/gdn-check run $S4 --chunk $c --precision tensor-core; run s4-f32-c$c 60 $B/gdn-check run $S4 --chunk $c; done
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
echo "s4 after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for c in 32 64; do
  for p in tensor-core f32; do
    run s1-$p-c$c 90 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --family chunked --chunk $c --precision $p --reference-heads 1
    for t in 256 512; do run t$t-$p-c$c 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq $t --repeat 10 --family chunked --chunk $c --precision $p; done
  done
done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
