#!/usr/bin/env bash
# Twentieth session, call 4. The crossover of call 3 over head sizes: nk 2, nv 4, 64 sequences of
# T tokens, dk = dv = D, trained by the recurrent family (its per-head backward, a checkpoint at
# T) and by the chunked one (chunks of T), forward and backward timed. Packs $OUT/g4.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g4; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g4.tgz -C /tmp g4; }
run() { local name=$1 limit=$2; shift 2; local s=$SECONDS; timeout $limit "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name --format=csv > $W/gpu.txt 2>&1
for d in 32 64 96 128 160 192 256; do
for t in 1 2 3 4 6 8 12 16; do
for fam in chunked recurrent; do
run d$d-t$t-$fam 40 $B/gdn-check run --nk 2 --nv 4 --dk $d --dv $d --batch 64 --seq $t --family $fam --chunk $t --checkpoint-interval $t --repeat 10
done
done
echo "d$d after $((SECONDS-t0)) s" >> $W/progress.txt; pack
done
for t in 3 5 6; do
for fam in chunked recurrent; do
run next-t$t-$fam 40 $B/gdn-check run --preset qwen3-next --batch 64 --seq $t --family $fam --chunk $t --checkpoint-interval $t --repeat 10
run small-t$t-$fam 40 $B/gdn-check run --preset qwen3.5-small --batch 64 --seq $t --family $fam --chunk $t --checkpoint-interval $t --repeat 10
done
done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
