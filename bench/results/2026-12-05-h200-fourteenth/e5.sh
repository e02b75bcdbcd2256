#!/usr/bin/env bash
# Fourteenth session, call 3: the column backward choosing a chunk's entering state by select (no branch).
set -u
O=${OUT:-out}; W=/tmp/e5; rm -rf $W; mkdir -p $O $W; B=.dev/bin
(cd .dev && tar xJf bin.tar.xz)
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for r in 1 2; do
run s4-$r 60 $B/gdn-check run $S4
run s4-i4-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/bconst run s4-bconst-$r 60 $B/gdn-check run $S4
done
for i in 4 8 16 32 64 128; do run s4-i$i 60 $B/gdn-check run $S4 --checkpoint-interval $i; done
for i in 4 32 128; do run t1024-i$i 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --checkpoint-interval $i; done
run t1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent
for i in 4 13 3 1; do run odd-i$i 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 24 --dv 48 --batch 2 --seq 37 --state --checkpoint-interval $i --family recurrent --repeat 1; done
run d256-i4 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state --checkpoint-interval 4
run d256 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state
run fuzz 100 $B/gdn-check fuzz --cases 300 --seed 46 --jobs 8 --family recurrent
tar czf $O/e5.tgz -C /tmp e5
