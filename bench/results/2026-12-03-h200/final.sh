#!/usr/bin/env bash
# Final H200 call: fuzz both precisions, per-kernel profiles at S1, criterion (chunked, S1-S4 and
# decode), then fla's S1 bf16 figures on the same machine. Everything lands in $OUT/final.tgz.
set -u
O=${OUT:-out}; W=/tmp/final; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
tar xJf .dev/bin.tar.xz -C .dev
pack() { tar czf $O/final.tgz -C /tmp final; }
for p in f32 tensor-core; do for seed in 31 32 33 34; do
  ( s=$SECONDS; timeout 170 $B/gdn-check fuzz --cases 60 --seed $seed --family chunked --precision $p > $W/fuzz-$p-$seed.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/fuzz-$p-$seed.txt ) &
done; done
s=$SECONDS; timeout 150 $B/test-gdn-train-memory > $W/test-memory.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/test-memory.txt
wait
echo "fuzz done after $((SECONDS-t0)) s"; pack
for p in f32 tensor-core; do
  timeout 60 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --family chunked --precision $p > $W/s1-chunked-$p.txt 2>&1
done
timeout 60 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --family chunked --chunk 32 > $W/s1-chunked-f32-chunk32.txt 2>&1
GDN_BOUNDS_CHECKS=0 timeout 60 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --family chunked > $W/s1-chunked-f32-nobounds.txt 2>&1
echo "profiles done after $((SECONDS-t0)) s"; pack
GDN_BENCH_SHAPES=standard CRITERION_HOME=/tmp/criterion GDN_BENCH_SUMMARY=$W/ours.jsonl timeout 200 \
  $B/bench-gdn-train-layer --bench "chunked-.*/layer/" --warm-up-time 0.5 --measurement-time 1 > $W/bench-ours.txt 2>&1
echo "bench rc=$? after $((SECONDS-t0)) s"; pack
for s in "fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16"; do timeout 150 python3 .dev/fla_bench.py $s > /dev/null 2>&1 & done; wait
echo "fla compiled after $((SECONDS-t0)) s"
for s in "fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16"; do
  left=$((570 - (SECONDS - t0))); [ $left -lt 15 ] && break
  timeout $left python3 .dev/fla_bench.py $s >> $W/fla.txt 2>&1
done
echo "total $((SECONDS-t0)) s"; pack
for f in $W/fuzz-*.txt $W/test-memory.txt; do echo "== $f: $(tail -3 $f | tr '\n' ' ' | cut -c1-200)"; done
grep -h -A3 "device time" $W/s1-*.txt; grep -h "^FLA" $W/fla.txt; grep -c "time:" $W/bench-ours.txt
