#!/usr/bin/env bash
# Tenth session, call 6: the family pick for a batch (Family::picked_for_batch) on the H200: S4 left
# to pick (f32: the recurrent family now), and the test binaries that pick or count bindings.
set -u
O=${OUT:-out}; W=/tmp/e6; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e6.tgz -C /tmp e6; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20"
run s4-auto 60 $B/gdn-check run $S4
run t1024-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 5
pack
for t in $B/test-gdn-train-* $B/test-gdn-check-cli $B/test-gdn-check-windowed $B/test-gdn-check-engine $B/test-gdn-check-spot_check; do GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 100 $t --include-ignored; pack; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
