#!/usr/bin/env bash
# Session 4, call 3 (binary of the chunk_work packing: chunked f32 kernels within 10 storage buffers): fla S1 compiles while the device suite and two
# 1000-case fuzz campaigns run; then every other device test binary, decode timing, S1 profiles of
# both precisions (the baseline for the reshaping), fla S1 graph figures. All into $OUT/c3.tgz.
set -u
O=${OUT:-out}; W=/tmp/c3; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c3.tgz -C /tmp c3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $W/gpu.txt 2>&1
shapes=("fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16")
for s in "${shapes[@]}"; do timeout 200 python3 .dev/fla_bench.py $s > /dev/null 2>&1 & done
( run fuzz-tensor-core 220 $B/gdn-check fuzz --cases 1000 --seed 12 --jobs 6 --family chunked --precision tensor-core ) &
( run fuzz-f32 220 $B/gdn-check fuzz --cases 1000 --seed 14 --jobs 6 --family chunked --precision f32 ) &
run device-suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
wait
echo "phase 1 after $((SECONDS-t0)) s" > $W/progress.txt; pack
for t in $B/test-*; do
  case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 60 $t ;; esac
done
echo "tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run decode-n8 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
run decode-n64 40 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
C="--preset qwen3-next --batch 8 --seq 1024 --family chunked --repeat 5 --profile"
for p in tensor-core f32; do run s1-$p 60 $B/gdn-check run $C --precision $p --reference-heads 2 --state; done
echo "ours after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for s in "${shapes[@]}"; do timeout 50 python3 .dev/fla_bench.py $s >> $W/fla.txt 2>&1; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
