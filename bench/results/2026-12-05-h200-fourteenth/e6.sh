#!/usr/bin/env bash
# Fourteenth session, call 4: the forward staging 24 tokens at dk = 128 and 12 at dk = 256 (the
# most within 32 KiB), as overrides, beside the built 16 and 8; at interval 4 and the default.
set -u
O=${OUT:-out}; W=/tmp/e6; rm -rf $W; mkdir -p $O $W; B=.dev/bin
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/e6.tgz -C /tmp e6; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family recurrent"
D256="--preset qwen3-next --nk 1 --nv 2 --dk 256 --dv 256 --batch 1 --seq 128 --repeat 10 --family recurrent --profile --state"
for r in 1 2; do
run s4-i4-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/stage24 run s4-i4-stage24-$r 60 $B/gdn-check run $S4 --checkpoint-interval 4
GDN_KERNEL_DIR=.dev/bis/stage24 run s4-stage24-$r 60 $B/gdn-check run $S4
done
pack
GDN_KERNEL_DIR=.dev/bis/stage24 run d256-stage12 60 $B/gdn-check run $D256
run d256 60 $B/gdn-check run $D256
pack
