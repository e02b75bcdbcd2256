#!/usr/bin/env bash
# Session 5, call 1: fla's kernels for every bench shape compile (Triton cache kept for the bench
# call) while issue 12's half-storage and caller-buffer checks run; then S1 with bf16 storage beside
# S1 in f32 storage, timed alone.
set -u
O=${OUT:-out}; W=/tmp/c1; mkdir -p $O $W; t0=$SECONDS
tar xJf .dev/bin.tar.xz -C .dev; B=.dev/bin
pack() { tar czf $O/c1.tgz -C /tmp c1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv > $W/gpu.txt 2>&1
export TRITON_CACHE_DIR=/tmp/triton
shapes=("fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 float32"
        "fwd 2 4096 16 32 bfloat16" "bwd 2 4096 16 32 bfloat16" "bwd 2 4096 16 32 float32"
        "fwd 1 8192 16 64 bfloat16" "bwd 1 8192 16 64 bfloat16" "bwd 1 8192 16 64 float32"
        "fwd 1 128 2 4 bfloat16" "bwd 1 128 2 4 bfloat16")
i=0; for s in "${shapes[@]}"; do i=$((i+1)); ( run fla-compile-$i 330 python3 .dev/fla_bench.py $s ) & done
run half_storage 120 $B/test-gdn-check-half_storage --nocapture
run engine 120 $B/test-gdn-check-engine --nocapture
run fuzz-bf16 200 $B/gdn-check fuzz --cases 1000 --seed 21 --jobs 6 --storage bf16
run fuzz-f16 200 $B/gdn-check fuzz --cases 1000 --seed 21 --jobs 6 --storage f16
wait
echo "phase 1 after $((SECONDS-t0)) s" > $W/progress.txt; pack
S1="run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --reference-heads 2"
run s1-bf16 60 $B/gdn-check $S1 --storage bf16
run s1-f32 60 $B/gdn-check $S1
run s1-bf16-tc 60 $B/gdn-check $S1 --storage bf16 --family chunked --precision tensor-core
run s1-f32-tc 60 $B/gdn-check $S1 --family chunked --precision tensor-core
du -sh /tmp/triton >> $W/progress.txt
tar czf $O/triton.tgz -C /tmp triton
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
