#!/usr/bin/env bash
# Nineteenth session, call 5. S4 (interval 4), three rounds alternating, b7a6d56's binary, every
# run with q-split's qk_norm_conv_backward: qs (b7a6d56's column backward), ra-after (its partials
# summed into registers before the chunk's second barrier and stored after it), rab-after-vec4
# (the same, four rows a thread, stored as vec4s). Each run checks itself against gdn-ref.
# Packs $OUT/g5.tgz.
set -u
O=${OUT:-out}; W=/tmp/g5; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/g5.tgz -C /tmp g5; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent --checkpoint-interval 4"
for r in 1 2 3; do
for v in qs ra-after rab-after-vec4; do
GDN_KERNEL_DIR=.dev/bis/$v run s4-$v-$r 60 $B/gdn-check-b7a6d56 run $S4
done
done
GDN_KERNEL_DIR=.dev/bis/rab-after-vec4 run s4-rab-i32 60 $B/gdn-check-b7a6d56 run ${S4% --checkpoint-interval 4}
echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
