#!/usr/bin/env bash
# Ninth session, call 9 (the final commit's binaries: q/k norms and gates in one dispatch): S4 in
# both families and S1 recurrent with per-kernel profiles beside fla's S4, the bundled device suite
# with the ignored tests, a 500-case fuzz campaign, the decode step at 8 sequences.
set -u
O=${OUT:-out}; W=/tmp/e9; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e9.tgz -C /tmp e9; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for m in fwd bwd; do timeout 280 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16 > $W/fla-compile-$m.txt 2>&1 & done
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
run s4-tc 60 $B/gdn-check run $S4 --precision tensor-core
run s4-f32 60 $B/gdn-check run $S4 --family chunked
run s1-rec 100 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --family recurrent --profile
run dec-n8 40 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
wait
for m in fwd bwd; do run fla-s4-$m 120 python3 .dev/fla_bench.py $m 1 128 2 4 bfloat16; done
run s4-rec-2 60 $B/gdn-check run $S4 --family recurrent
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 100 $B/gdn-check fuzz --cases 500 --seed 10 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
