#!/usr/bin/env bash
# Nineteenth session, call 6. S4 (interval 4), three rounds alternating: b7a6d56 (the session's
# start, the fused norm backward removed), HEAD (5c73db1: q/k norms' backward on 256 threads, the
# column backward's partials stored after its barrier, the gate sums before the q/k backward's
# stores, the forward's residuals written with its outputs), and HEAD with one of those undone by a
# GDN_KERNEL_DIR override of 323d0cc's or b7a6d56's kernel (rbc-old, qk-old, fwd-old), or with the
# conv/q/k-norm forward's row sums before its stores (f-a: the key products' sum moved up; f-b: and
# the gates and value conv after them). fla's S4 graph figures, interval 32, dk 256, the device
# suite. Packs $OUT/g6.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g6; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g6.tgz -C /tmp g6; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for r in 1 2 3; do
run s4-start-$r 60 $B/gdn-check-b7a6d56 run $S4 --checkpoint-interval 4
run s4-head-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
for v in rbc-old qk-old fwd-old f-a f-b; do
GDN_KERNEL_DIR=.dev/bis/$v run s4-$v-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
done
done
echo "s4 after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fla-fwd 150 python3 .dev/fla_bench.py fwd 1 128 2 4 bfloat16
run fla-bwd 150 python3 .dev/fla_bench.py bwd 1 128 2 4 bfloat16
echo "fla after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run s4-head-i32 60 $B/gdn-check run $S4
run d256-start 60 $B/gdn-check-b7a6d56 run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state --checkpoint-interval 4
run d256-head 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state --checkpoint-interval 4
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
