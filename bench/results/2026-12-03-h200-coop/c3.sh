#!/usr/bin/env bash
# Device call 3: the tensor-core family forward and backward on the H200 (checked and timed).
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
run() { name=$1; shift; s=$SECONDS; timeout 120 "$@" > $O/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/$name.txt; }
TC="--family chunked --precision tensor-core"
run s1 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile $TC --reference-heads 2 --state
run s2 $B/gdn-check run --preset qwen3-next --batch 2 --seq 4096 --repeat 5 --profile $TC --reference-heads 1
run s3 $B/gdn-check run --preset qwen3-next --nv 64 --batch 1 --seq 8192 --repeat 5 --profile $TC --reference-heads 1
run s4 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile $TC
for a in "--nk 2 --nv 4 --dk 64 --dv 128 --batch 3 --seq 20" "--nk 2 --nv 2 --dk 256 --dv 32 --batch 1 --seq 70 --chunk 16" "--nk 1 --nv 3 --dk 16 --dv 256 --batch 2 --seq 50 --chunk 32" "--nk 1 --nv 2 --dk 48 --dv 80 --batch 2 --seq 65 --state" "--nk 2 --nv 4 --dk 256 --dv 256 --batch 2 --seq 200 --state"; do
  run small $B/gdn-check run $a $TC --repeat 1; cat $O/small.txt >> $O/smalls.txt
done
rm -f $O/small.txt
cd $O && tar czf c3.tgz *.txt && rm -f *.txt
