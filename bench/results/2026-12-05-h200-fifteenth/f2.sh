#!/usr/bin/env bash
# Fifteenth session, call 2 (not lent; for b31d98a or later): the fused conv kernels reading
# their token's span once, their taps' addresses independent of it and the conv state only where
# there is one, the gates' backward by head where partials are few; against 7a0df3d's binary,
# alternating; timing-only overrides from make_overrides.py (sgsum: row sums by 32-lane subgroup
# shuffles; kwin: the fused forward's four k convs from one window; both); S1 and dk 256 old/new;
# the driver's registers per kernel; then the device suite and campaigns on the new binary.
set -u
O=${OUT:-out}; W=/tmp/f2; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/f2.tgz -C /tmp f2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
D256="--preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state --checkpoint-interval 4"
for r in 1 2 3; do
run s4-old-$r 60 $B/gdn-check-7a0df3d run $S4 --checkpoint-interval 4
run s4-new-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/sgsum run s4-sgsum-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/kwin run s4-kwin-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/both run s4-both-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
done
for r in 1 2; do
run s4-old-i32-$r 60 $B/gdn-check-7a0df3d run $S4
run s4-new-i32-$r 60 $B/gdn-check run $S4
done
pack
run d256-old 60 $B/gdn-check-7a0df3d run $D256
run d256-new 60 $B/gdn-check run $D256
run s4-auto 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --family auto
run s1-old 120 $B/gdn-check-7a0df3d run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
run s1-new 120 $B/gdn-check run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --reference-heads 1 --profile
run t1024 60 $B/gdn-check run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 1024 --repeat 10 --family auto --profile
run stats 60 $B/gdn-check kernel-stats
echo "timings after $((SECONDS-t0)) s" > $W/progress.txt; pack
run suite 200 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
for t in $B/test-*; do case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN=$B/gdn-check run $(basename $t) 150 $t --include-ignored ;; esac; done
echo "tests after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run fuzz 60 $B/gdn-check fuzz --cases 300 --seed 50 --jobs 8 --family recurrent
run fuzz-all 90 $B/gdn-check fuzz --cases 150 --seed 51 --jobs 8
for a in "--nk 1 --nv 2 --dk 24 --dv 48 --batch 2 --seq 37 --state --checkpoint-interval 4" "--nk 1 --nv 3 --dk 32 --dv 16 --kk 3 --batch 3 --seq 20 --state" "--nk 2 --nv 6 --dk 16 --dv 16 --kk 2 --batch 40 --seq 9 --state" "--nk 1 --nv 1 --dk 80 --dv 32 --kk 1 --batch 2 --seq 9 --state"; do
  n=$(echo $a | tr -d ' -' | cut -c1-40); run odd-$n 60 $B/gdn-check run --preset qwen3-next $a --family recurrent --repeat 1 --reference-sequences 100 --profile
done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
