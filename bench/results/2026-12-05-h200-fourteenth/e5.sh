#!/usr/bin/env bash
# Fourteenth session, call 3: the column backward choosing a chunk's entering state by select (no
# branch); the forward's stage stored by quads (A/B against d10307d's forward, .dev/bis/fwd-d10307d);
# the small kernels' loads out of branches (A/B against .dev/bis/small-91ec359); the forward's stage
# at 8 and 32 tokens; interval 4; the device suite and campaigns. Ordered by priority: every pack
# brings back what ran so far.
set -u
O=${OUT:-out}; W=/tmp/e5; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e5.tgz -C /tmp e5; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
for r in 1 2; do
run s4-$r 60 $B/gdn-check run $S4
run s4-i4-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/bconst run s4-bconst-$r 60 $B/gdn-check run $S4
GDN_KERNEL_DIR=.dev/bis/fwd-d10307d run s4-fwd-d10307d-$r 60 $B/gdn-check run $S4
GDN_KERNEL_DIR=.dev/bis/small-91ec359 run s4-small-91ec359-$r 60 $B/gdn-check run $S4
for v in stage8 stage32; do GDN_KERNEL_DIR=.dev/bis/$v run s4-$v-$r 60 $B/gdn-check run $S4; done
done
pack
run stats 60 $B/gdn-check kernel-stats
for i in 4 13 3 1; do run odd-i$i 60 $B/gdn-check run --preset qwen3-next --nk 1 --nv 2 --dk 24 --dv 48 --batch 2 --seq 37 --state --checkpoint-interval $i --family recurrent --repeat 1 --reference-sequences 100; done
D256="--preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state"
run d256 60 $B/gdn-check run $D256
run d256-i4 60 $B/gdn-check run $D256 --checkpoint-interval 4
for i in 4 32; do run t1024-i$i 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family recurrent --checkpoint-interval $i; done
pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" > $W/progress.txt; pack
run fuzz 100 $B/gdn-check fuzz --cases 300 --seed 46 --jobs 8 --family recurrent
run fuzz-all 100 $B/gdn-check fuzz --cases 150 --seed 47 --jobs 8
echo "fuzz after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run s1-chunked 120 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
