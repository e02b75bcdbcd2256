#!/usr/bin/env bash
# Twentieth session, call 5. The working tree after calls 1-4: recurrence_forward (many heads)
# storing o, its checkpoints and hT as vec4s, and the tape training short sequences in many heads
# with the recurrent family (SHORT_RECURRENT_TRAINING_TOKENS). The vec4 stores against the scalar
# ones (old/: HEAD 161dd4d's kernel as an override), alternating; the picks; S4; then the device
# suite and the tests that pick families. Packs $OUT/g5.tgz as it goes.
set -u
O=${OUT:-out}; W=/tmp/g5; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g5.tgz -C /tmp g5; }
run() { local name=$1 limit=$2; shift 2; local s=$SECONDS; timeout $limit "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
nvidia-smi --query-gpu=name --format=csv > $W/gpu.txt 2>&1
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent --checkpoint-interval 4"
run s4-1 60 $B/gdn-check run $S4
for r in 1 2; do
for shape in "64 1" "64 4" "8 256"; do
set -- $shape
run fwd-$1x$2-vec4-$r 60 $B/gdn-check run --preset qwen3-next --batch $1 --seq $2 --family recurrent --repeat 10 --profile --reference-heads 2
GDN_KERNEL_DIR=.dev/old run fwd-$1x$2-old-$r 60 $B/gdn-check run --preset qwen3-next --batch $1 --seq $2 --family recurrent --repeat 10 --profile --reference-heads 2
done
done
echo "vec4 after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for shape in "64 1" "64 5" "64 6"; do
set -- $shape
run auto-next-$1x$2 60 $B/gdn-check run --preset qwen3-next --batch $1 --seq $2 --repeat 10 --reference-heads 2
done
run auto-d192-64x1 60 $B/gdn-check run --nk 2 --nv 4 --dk 192 --dv 192 --batch 64 --seq 1 --repeat 10
run s4-2 60 $B/gdn-check run $S4
echo "auto after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run suite 120 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "suite after $((SECONDS-t0)) s" >> $W/progress.txt; pack
for t in test-gdn-train-errors test-gdn-train-gates test-gdn-check-cli test-gdn-check-decode; do run $t 60 $B/$t --include-ignored; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
