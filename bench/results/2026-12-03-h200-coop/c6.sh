#!/usr/bin/env bash
# Final H200 call of the session: our S1-S4 profiles in both precisions (and the tensor-core group
# variants), fla's S1 bf16 figures on the same machine, then the device suite (tensor cores included)
# and short fuzz campaigns of both precisions. Everything lands in $OUT/final.tgz.
set -u
O=${OUT:-out}; W=/tmp/final; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
pack() { tar czf $O/final.tgz -C /tmp final; }
run() { name=$1; shift; s=$SECONDS; timeout 90 "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $W/gpu.txt 2>&1
C="--family chunked --repeat 5 --profile"
for p in tensor-core f32; do
  run s1-$p $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 $C --precision $p --reference-heads 2 --state
  run s2-$p $B/gdn-check run --preset qwen3-next --batch 2 --seq 4096 $C --precision $p --reference-heads 1
  run s3-$p $B/gdn-check run --preset qwen3-next --nv 64 --batch 1 --seq 8192 $C --precision $p --reference-heads 1
  run s4-$p $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --family chunked --repeat 20 --profile --precision $p
done
for g in g2 g1; do GDN_KERNEL_DIR=.dev/abl/$g run s1-tensor-core-$g $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 $C --precision tensor-core --reference-heads 1; done
GDN_BOUNDS_CHECKS=0 run s1-tensor-core-nobounds $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 $C --precision tensor-core --reference-sequences 0
echo "ours done after $((SECONDS-t0)) s" > $W/progress.txt; pack
for s in "fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16"; do timeout 150 python3 .dev/fla_bench.py $s > /dev/null 2>&1 & done; wait
echo "fla compiled after $((SECONDS-t0)) s" >> $W/progress.txt
for s in "fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16"; do timeout 60 python3 .dev/fla_bench.py $s >> $W/fla.txt 2>&1; done
echo "fla timed after $((SECONDS-t0)) s" >> $W/progress.txt; pack
( s=$SECONDS; timeout 170 $B/test-device --include-ignored --test-threads 2 > $W/tests.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/tests.txt ) &
for p in tensor-core f32; do ( s=$SECONDS; timeout 160 $B/gdn-check fuzz --cases 100 --seed 41 --family chunked --precision $p > $W/fuzz-$p.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/fuzz-$p.txt ) & done
wait
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
