#!/usr/bin/env bash
# Ninth session, call 8 (the commit's binaries): the decode step for heads of dk > 128 with 16 row
# lanes (64 state floats a lane): head sizes at 64 sequences, the qwen3-next preset, decode tests;
# S1 recurrent again (5 repeats).
set -u
O=${OUT:-out}; W=/tmp/e8; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e8.tgz -C /tmp e8; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for d in 256 192 160 128 64; do run dec-d$d 40 $B/gdn-check decode --preset qwen3-next --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 100; done
for n in 8 64; do run dec-n$n 40 $B/gdn-check decode --preset qwen3-next --sequences $n --steps 200; done
run stats 60 $B/gdn-check kernel-stats --kernel decode_step --dk 256 --dv 256
run s1-rec 100 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --family recurrent --profile
run test-decode 120 $B/test-gdn-check-decode --include-ignored
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
