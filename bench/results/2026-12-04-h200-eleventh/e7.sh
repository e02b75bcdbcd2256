#!/usr/bin/env bash
# Eleventh session, call 7: the final kernels (the column backward with vec2 shares, two barriers a
# chunk, four columns a workgroup): S4 beside fla's figures of calls 4-6, dk = 256, the device suite
# with the ignored tests, campaigns.
set -u
O=${OUT:-out}; W=/tmp/e7; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e7.tgz -C /tmp e7; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
run s4 60 $B/gdn-check run $S4
run s4-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family auto
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run t1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --profile
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 30 --jobs 8 --family recurrent
run fuzz-all 60 $B/gdn-check fuzz --cases 150 --seed 31 --jobs 8
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
