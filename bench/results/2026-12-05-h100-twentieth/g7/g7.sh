#!/usr/bin/env bash
# Twentieth session, call 6: which vec4 store slowed 8 x 256 (a: o scalar, ckpt/ht vec4; b: only hT vec4, the rest as 161dd4d).
set -u
O=${OUT:-out}; W=/tmp/g7; rm -rf $W; mkdir -p $O $W; B=.dev/bin
(cd .dev && tar xJf bin.tar.xz)
run() { local name=$1 limit=$2; shift 2; timeout $limit "$@" > $W/$name.txt 2>&1; echo "rc=$?" >> $W/$name.txt; }
for shape in "8 256" "64 1"; do set -- $shape
for v in c e; do GDN_KERNEL_DIR=.dev/$v run fwd-$1x$2-$v 40 $B/gdn-check run --preset qwen3-next --batch $1 --seq $2 --family recurrent --repeat 10 --profile --reference-heads 2; done
run fwd-$1x$2-vec4 40 $B/gdn-check run --preset qwen3-next --batch $1 --seq $2 --family recurrent --repeat 10 --profile --reference-heads 2
done
tar czf $O/g7.tgz -C /tmp g7
