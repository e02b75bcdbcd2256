#!/usr/bin/env bash
# Validation and our benches on the H200, in one call: the device tests and both 1000-case fuzz
# campaigns side by side (CPU-bound references on 16 cores), then criterion alone on the GPU.
set -u
O=${OUT:-out}; mkdir -p $O; B=.dev/bin; t0=$SECONDS
tar xJf .dev/bin.tar.xz -C .dev || { echo "no xz"; exit 1; }
for p in f32 tensor-core; do for seed in 21 22 23 24; do
  ( s=$SECONDS; timeout 330 $B/gdn-check fuzz --cases 250 --seed $seed --family chunked --precision $p > $O/fuzz-$p-$seed.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-$p-$seed.txt ) &
done; done
s=$SECONDS; timeout 330 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2 > $O/test-device_matches_reference.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/test-device_matches_reference.txt
for t in $B/test-*; do case $t in *device_matches_reference) ;; *)
  s=$SECONDS; timeout 200 $t > $O/$(basename $t).txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/$(basename $t).txt ;; esac; done
for a in "--preset qwen3.5-small --batch 64 --seq 1" "--preset qwen3.5-large" "--seq 65536 --reference-sequences 0"; do
  echo "== gdn-check run $a" >> $O/presets.txt; timeout 60 $B/gdn-check run $a >> $O/presets.txt 2>&1; echo "rc=$?" >> $O/presets.txt
done
wait
echo "validation done after $((SECONDS-t0)) s"
for f in $O/test-*.txt $O/fuzz-*.txt; do echo "== $f: $(grep -E 'test result|no failures|FAIL' $f | head -3 | tr '\n' ' ') $(tail -1 $f)"; done
grep -E "^== |rc=|^out |refused|rror" $O/presets.txt | cut -c1-200
# Ours: criterion at S1-S4 and decode, every family and precision, the layer and S1's kernels.
GDN_BENCH_SHAPES=standard CRITERION_HOME=/tmp/criterion GDN_BENCH_SUMMARY=$O/ours.jsonl timeout $((575 - (SECONDS - t0))) \
  $B/bench-gdn-train-layer --bench "/layer/|-s1/" --warm-up-time 0.5 --measurement-time 1 > $O/bench-ours.txt 2>&1
echo "bench rc=$? total $((SECONDS-t0)) s; $(wc -l < $O/ours.jsonl) records"
tar czf $O/criterion.tgz -C /tmp criterion 2>/dev/null
