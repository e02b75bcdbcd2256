#!/usr/bin/env bash
# Device call 2: where the tensor-core forward's time goes (ablations through GDN_KERNEL_DIR), bounds
# checks off, and 16-column state blocks.
B=.dev/bin; O=${OUT:-out}; mkdir -p $O
S1="run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --family chunked --precision tensor-core --reference-sequences 0"
run() { name=$1; shift; s=$SECONDS; timeout 100 "$@" > $O/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $O/$name.txt; }
run base $B/gdn-check $S1
GDN_BOUNDS_CHECKS=0 run nobounds $B/gdn-check $S1
for a in a1 a2 a3 a4 a5; do GDN_KERNEL_DIR=.dev/abl/$a run $a $B/gdn-check $S1; done
run cb16 $B/gdn-check-cb16 $S1
cd $O && tar czf c2.tgz *.txt && rm -f *.txt
