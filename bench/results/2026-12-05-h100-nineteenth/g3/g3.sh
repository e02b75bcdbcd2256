#!/usr/bin/env bash
# Nineteenth session, call 3. S4 (interval 4), three rounds alternating, every run with q-split's
# qk_norm_conv_backward (call 2): b7a6d56's column backward and the working tree's (shares summed by
# warps of their own), each as built and with its step loop's four `if (live)` around the shares'
# stores made `if (true)` (r0q, r1q: exact at dk = 128, where every row is live). Packs $OUT/g3.tgz.
set -u
O=${OUT:-out}; W=/tmp/g3; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g3.tgz -C /tmp g3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent --checkpoint-interval 4"
for r in 1 2 3; do
GDN_KERNEL_DIR=.dev/bis/qs run s4-old-$r 60 $B/gdn-check-b7a6d56 run $S4
GDN_KERNEL_DIR=.dev/bis/r0q run s4-oldnolive-$r 60 $B/gdn-check-b7a6d56 run $S4
GDN_KERNEL_DIR=.dev/bis/qs run s4-new-$r 60 $B/gdn-check run $S4
GDN_KERNEL_DIR=.dev/bis/r1q run s4-newnolive-$r 60 $B/gdn-check run $S4
done
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
