#!/usr/bin/env bash
# Eleventh session, call 3: the forward at four columns a workgroup (128 invocations), the
# backward's reverse sweep four steps a round with each step's inputs loaded four steps ahead and
# its replay two rounds ahead: S4 and other few-head shapes, registers, a recurrent campaign.
set -u
O=${OUT:-out}; W=/tmp/e3; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e3.tgz -C /tmp e3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile"
run s4-rec 60 $B/gdn-check run $S4 --family recurrent
run s4-rec-np 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family recurrent
run stats 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns
run stats-f 60 $B/gdn-check kernel-stats --kernel recurrence_forward_chunks
run stats256 60 $B/gdn-check kernel-stats --kernel recurrence_backward_columns --dk 256 --dv 256
run s4-rec-state 60 $B/gdn-check run $S4 --family recurrent --state --checkpoint-interval 13
run t512 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 512 --repeat 10 --family recurrent --profile
run b4 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 4 --seq 128 --repeat 10 --family recurrent --profile
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run t1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --profile
pack
run fuzz 100 $B/gdn-check fuzz --cases 300 --seed 23 --jobs 8 --family recurrent
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
