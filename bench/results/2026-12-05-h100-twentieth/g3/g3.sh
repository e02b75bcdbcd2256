#!/usr/bin/env bash
# Twentieth session, call 3. Call 2's shape loop lost T to the harness's own variable; this is the
# crossover it meant to find: the recurrent family (its per-head backward) against the chunked one
# the tape picks, training B sequences of T tokens in many heads. Packs $OUT/g3.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g3; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g3.tgz -C /tmp g3; }
run() { local name=$1 limit=$2; shift 2; local s=$SECONDS; timeout $limit "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name --format=csv > $W/gpu.txt 2>&1
R="--repeat 10 --profile"
for heads in "next:--preset qwen3-next" "small:--preset qwen3-next --nk 2 --nv 4" "d256:--preset qwen3-next --nk 2 --nv 4 --dk 256 --dv 256"; do
label=${heads%%:*}; args=${heads#*:}
for bt in "64 1" "64 2" "64 4" "64 8" "64 16" "8 1" "8 4" "8 16"; do
set -- $bt
for fam in chunked recurrent; do
run $label-$1x$2-$fam 60 $B/gdn-check run $args --batch $1 --seq $2 --family $fam --chunk $2 --checkpoint-interval $2 $R
done
done
pack
echo "$label after $((SECONDS-t0)) s" >> $W/progress.txt
done
pack
