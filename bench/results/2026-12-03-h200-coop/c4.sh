#!/usr/bin/env bash
# Device call 4: tensor cores after splitting the key gradients, the windowed conv kernels (both
# precisions), and 16-column state blocks.
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
run() { name=$1; shift; s=$SECONDS; timeout 120 "$@" > $O/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/$name.txt; }
S1="run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --family chunked"
run s1-tc $B/gdn-check $S1 --precision tensor-core --reference-heads 2 --state
run s1-f32 $B/gdn-check $S1 --precision f32 --reference-heads 2 --state
run s1-tc-cb16 $B/gdn-check-cb16 $S1 --precision tensor-core --reference-sequences 0
run s4-tc $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family chunked --precision tensor-core
run s4-f32 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family chunked --precision f32
run s1-rec $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 3 --family recurrent --reference-heads 1
cd $O && tar czf c4.tgz *.txt && rm -f *.txt
