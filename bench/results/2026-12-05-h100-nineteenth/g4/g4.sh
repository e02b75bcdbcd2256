#!/usr/bin/env bash
# Nineteenth session, call 4. S4 (interval 4), three rounds alternating, b7a6d56's binary, every
# run with q-split's qk_norm_conv_backward (323d0cc's kernel): qs (b7a6d56's column backward), red
# (call 2's: shares summed by warps of their own), and timing-only overrides (results wrong by
# design): v1-red-nostore (red, its partial stores never taken), v2-red-noread (red, the shares
# never summed), v3-old-nostore (b7a6d56's, its partial stores never taken), r-noreduce (call 1's).
# Packs $OUT/g4.tgz.
set -u
O=${OUT:-out}; W=/tmp/g4; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g4.tgz -C /tmp g4; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent --checkpoint-interval 4"
for r in 1 2 3; do
for v in qs red v1-red-nostore v2-red-noread v3-old-nostore r-noreduce; do
GDN_KERNEL_DIR=.dev/bis/$v run s4-$v-$r 60 $B/gdn-check-b7a6d56 run $S4
done
done
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
