#!/usr/bin/env bash
# Nineteenth session, call 1. HEAD (b7a6d56: the fused norm backward removed) at S4 (interval 4),
# three rounds alternating with timing-only overrides of the column backward and of the q/k norms'
# backward (results wrong by design: parts of a kernel's work skipped, its dispatch kept): r-noreduce
# (no sums of the groups' dq/dk shares, no partial stores), r-nogates (no dl/dbeta sums), r-noload
# (the next chunk's loads at the current chunk's addresses: L1 hits), r-chain (no shares, no sums, no
# barriers in the loop: the lanes' chain alone), r-empty; q-nohat (no partial rows read), q-novalues
# (no value channels), q-empty. Then fla's S4 graph figures, interval 8 and 32, the device suite and
# the other device tests on HEAD. Packs $OUT/g1.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g1; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g1.tgz -C /tmp g1; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for r in 1 2 3; do
run s4-head-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
for v in r-noreduce r-nogates r-noload r-chain r-empty q-nohat q-novalues q-empty; do
GDN_KERNEL_DIR=.dev/bis/$v run s4-$v-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
done
done
echo "s4 after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fla-fwd 150 python3 .dev/fla_bench.py fwd 1 128 2 4 bfloat16
run fla-bwd 150 python3 .dev/fla_bench.py bwd 1 128 2 4 bfloat16
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run s4-i8 60 $B/gdn-check run $S4 --checkpoint-interval 8
run s4-i32 60 $B/gdn-check run $S4
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "suite after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for t in $B/test-gdn-train-adopted_device $B/test-gdn-train-timing $B/test-gdn-train-grids; do GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
