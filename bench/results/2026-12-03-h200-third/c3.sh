#!/usr/bin/env bash
# Session 3, final call: fla compiles (S1-S4) while the device suite and two 1000-case fuzz campaigns
# run; then our S1-S4 profiles in both precisions and the driver's kernel statistics; then fla's
# graph figures. Everything lands in $OUT/final.tgz.
set -u
O=${OUT:-out}; W=/tmp/final; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
pack() { tar czf $O/final.tgz -C /tmp final; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $W/gpu.txt 2>&1
shapes=("fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 float32"
        "fwd 2 4096 16 32 bfloat16" "bwd 2 4096 16 32 bfloat16"
        "fwd 1 8192 16 64 bfloat16" "bwd 1 8192 16 64 bfloat16"
        "fwd 1 128 2 4 bfloat16" "bwd 1 128 2 4 bfloat16")
for s in "${shapes[@]}"; do timeout 280 python3 .dev/fla_bench.py $s > /dev/null 2>&1 & done
( run fuzz-tensor-core 230 $B/gdn-check fuzz --cases 1000 --seed 11 --jobs 6 --family chunked --precision tensor-core ) &
( run fuzz-f32 230 $B/gdn-check fuzz --cases 1000 --seed 11 --jobs 6 --family chunked --precision f32 ) &
run tests 200 $B/test-device --include-ignored --test-threads 2
run stats 60 $B/gdn-check kernel-stats
wait
echo "phase 1 (fla compiled, fuzz, tests) after $((SECONDS-t0)) s" > $W/progress.txt; pack
C="--family chunked --repeat 5 --profile"
for p in tensor-core f32; do
  run s1-$p 60 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 $C --precision $p --reference-heads 2 --state
  run s2-$p 60 $B/gdn-check run --preset qwen3-next --batch 2 --seq 4096 $C --precision $p --reference-heads 1
  run s3-$p 60 $B/gdn-check run --preset qwen3-next --nv 64 --batch 1 --seq 8192 $C --precision $p --reference-heads 1
  run s4-$p 30 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --family chunked --repeat 20 --profile --precision $p
done
echo "ours after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for s in "${shapes[@]}"; do timeout 60 python3 .dev/fla_bench.py $s >> $W/fla.txt 2>&1; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
