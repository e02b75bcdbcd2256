#!/usr/bin/env bash
# Device call 1: the tensor-core forward's first timing and check on the H200, beside this build's f32.
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
run() { name=$1; shift; s=$SECONDS; timeout 170 "$@" > $O/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/$name.txt; }
run s1-tc $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --family chunked --precision tensor-core --reference-heads 2
run s1-f32 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --family chunked --precision f32 --reference-heads 2
run s2-tc $B/gdn-check run --preset qwen3-next --batch 2 --seq 4096 --repeat 5 --profile --family chunked --precision tensor-core --reference-heads 1
run s3-tc $B/gdn-check run --preset qwen3-next --nv 64 --batch 1 --seq 8192 --repeat 5 --profile --family chunked --precision tensor-core --reference-heads 1
run s4-tc $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family chunked --precision tensor-core
for a in "--nk 2 --nv 4 --dk 64 --dv 128 --batch 3 --seq 20" "--nk 2 --nv 2 --dk 256 --dv 32 --batch 1 --seq 70 --chunk 16" "--nk 1 --nv 3 --dk 16 --dv 256 --batch 2 --seq 50 --chunk 32" "--nk 1 --nv 2 --dk 48 --dv 80 --batch 2 --seq 65 --state"; do
  run small $B/gdn-check run $a --family chunked --precision tensor-core --repeat 1; cat $O/small.txt >> $O/smalls.txt
done
rm -f $O/small.txt
cd $O && tar czf c1.tgz *.txt && rm -f *.txt
