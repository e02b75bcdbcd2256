#!/usr/bin/env bash
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
t0=$SECONDS
( s=$SECONDS; timeout 530 $B/gdn-check fuzz --cases 1000 --seed 7 --family chunked > $O/fuzz-chunked-f32.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-chunked-f32.txt ) &
( s=$SECONDS; timeout 530 $B/gdn-check fuzz --cases 1000 --seed 8 --family chunked --precision tensor-core > $O/fuzz-chunked-tc.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-chunked-tc.txt ) &
s=$SECONDS; $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2 --nocapture > $O/tests.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/tests.txt
for t in test-gdn-check-conv_state test-gdn-check-fuzz test-gdn-train-errors test-gdn-train-memory; do
  s=$SECONDS; $B/$t --nocapture > $O/$t.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/$t.txt
done
for p in f32 tensor-core; do
  $B/gdn-check run --batch 8 --seq 1024 --repeat 5 --family chunked --precision $p --profile > $O/s1-chunked-$p.txt 2>&1
done
wait
echo "total $((SECONDS-t0)) s"
for f in $O/*.txt; do echo "== $f"; tail -n 3 $f | cut -c1-150; done
for f in $O/fuzz*.txt; do echo "== $f"; tail -n 18 $f | cut -c1-120; done
for f in $O/s1*.txt; do echo "== $f"; grep -A4 "device time" $f; grep chunk_ $f; done
