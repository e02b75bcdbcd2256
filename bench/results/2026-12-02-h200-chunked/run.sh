#!/usr/bin/env bash
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
for p in f32 tensor-core; do
  $B/gdn-check run --batch 8 --seq 1024 --repeat 5 --family chunked --precision $p --profile > $O/s1-chunked-$p.txt 2>&1
done
for f in $O/s1*.txt; do echo "== $f"; grep -A3 "device time" $f | tail -3; grep chunk_ $f; done
s=$SECONDS; $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 1 --nocapture > $O/tests.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/tests.txt
s=$SECONDS; $B/test-gdn-check-conv_state --nocapture > $O/tests-conv.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/tests-conv.txt
s=$SECONDS; $B/test-gdn-check-fuzz --nocapture > $O/tests-fuzz.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/tests-fuzz.txt
s=$SECONDS; $B/gdn-check fuzz --cases 1000 --seed 7 --family chunked > $O/fuzz-chunked-f32.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-chunked-f32.txt
s=$SECONDS; $B/gdn-check fuzz --cases 1000 --seed 8 --family chunked --precision tensor-core > $O/fuzz-chunked-tc.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-chunked-tc.txt
s=$SECONDS; $B/gdn-check fuzz --cases 1000 --seed 9 --family recurrent > $O/fuzz-recurrent.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/fuzz-recurrent.txt
tail -n 3 $O/tests*.txt
for f in $O/fuzz*.txt; do echo "== $f"; tail -n 16 $f | cut -c1-60; done
