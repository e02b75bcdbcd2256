#!/usr/bin/env bash
# Session 6, call 2 (binary dfcfc65: decode_step with two barriers a token). Where the decode step's time
# goes: the step at 8 and 64 sequences of qwen3-next as built (plain: two barriers a token), and with
# decode_step replaced (GDN_KERNEL_DIR) by base (call 1's kernel, four barriers a token), empty
# (returns at once: the dispatch chain alone), nostate (no state loads or stores), nobarrier (no
# barriers in the token loop: wrong results, its time only), noshift (no conv-window shift); plain,
# base and empty at dk = dv = 8 (64 sequences, nk 2, nv 4). Then the tape's device memory per token
# per preset and family (--plan-only, T = 4096); the CLI and error tests; qwen3-next at T = 65 536
# on tensor cores; the largest qwen3-next batch, 64 × 4096 tokens in the recurrent family (437 KB a
# token: 115 GB), spot-checked. All into $OUT/c2.tgz.
set -u
O=${OUT:-out}; W=/tmp/c2; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c2.tgz -C /tmp c2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
free -g > $W/host.txt 2>&1
for n in 8 64; do run plain-n$n 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200; done
for v in base empty nostate nobarrier noshift; do
  for n in 8 64; do
    GDN_KERNEL_DIR=.dev/kv/$v run $v-n$n 30 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200
  done
done
run plain-d8 30 $B/gdn-check decode --nk 2 --nv 4 --dk 8 --dv 8 --sequences 64 --steps 50
for v in base empty; do
  GDN_KERNEL_DIR=.dev/kv/$v run $v-d8 30 $B/gdn-check decode --nk 2 --nv 4 --dk 8 --dv 8 --sequences 64 --steps 50
done
run plain-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
echo "decode after $((SECONDS-t0)) s" > $W/progress.txt; pack
for p in qwen3.5-small qwen3-next qwen3.5-27b qwen3.5-large; do
  for f in recurrent chunked; do run plan-$p-$f 30 $B/gdn-check run --preset $p --seq 4096 --family $f --plan-only; done
  run plan-$p-tc 30 $B/gdn-check run --preset $p --seq 4096 --family chunked --precision tensor-core --plan-only
done
for t in test-gdn-check-cli test-gdn-train-errors test-gdn-check-decode; do GDN_CHECK_BIN=$B/gdn-check run $t 60 $B/$t --nocapture; done
echo "plans and tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run next-t65536-tc 120 $B/gdn-check run --preset qwen3-next --seq 65536 --reference-heads 1 --repeat 3 --precision tensor-core
echo "t65536 tc after $((SECONDS-t0)) s" >> $W/progress.txt; pack
[ $((SECONDS-t0)) -lt 330 ] && run next-b64-t4096-recurrent 230 $B/gdn-check run --preset qwen3-next --batch 64 --seq 4096 --family recurrent --reference-sequences 2 --reference-heads 1 --repeat 1
free -g >> $W/host.txt 2>&1
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
