#!/usr/bin/env bash
# Session 7, call 3 (binary with decode_step's loads in batches, 32 state elements a thread, and
# column sums of short batches in 16 blocks; gdn-check-old: 4ceabd7): the decode step against the
# old one in one run (1, 8, 64 sequences, 4 tokens a step, dk = dv = 8 and 256) and two tilings and
# no state traffic through GDN_KERNEL_DIR (.dev/kv8); the decode test; S4 at chunks 16, 32, 64 in
# both precisions; the device suite with the tensor-core test. Into $OUT/c3.tgz.
set -u
O=${OUT:-out}; W=/tmp/c3; rm -rf $W; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c3.tgz -C /tmp c3; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
D="decode --preset qwen3-next --steps 100"
for n in 1 8 64; do run new-n$n 30 $B/gdn-check $D --sequences $n; run old-n$n 30 $B/gdn-check-old $D --sequences $n; done
for v in t64 t16 nostate; do for n in 1 8 64; do GDN_KERNEL_DIR=.dev/kv8/$v run $v-n$n 30 $B/gdn-check $D --sequences $n; done; done
run new-n8-t4 30 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 50 --tokens 4
for d in 8 256; do run new-d$d 30 $B/gdn-check decode --nk 2 --nv 4 --dk $d --dv $d --sequences 64 --steps 20; done
echo "decode after $((SECONDS-t0)) s" > $W/progress.txt; pack
run test-decode 90 $B/test-gdn-check-decode --nocapture
echo "test after $((SECONDS-t0)) s" >> $W/progress.txt; pack
S4="--preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20 --profile --family chunked"
for c in 16 32 64; do run s4-tc-c$c 60 $B/gdn-check run $S4 --chunk $c --precision tensor-core; run s4-f32-c$c 60 $B/gdn-check run $S4 --chunk $c; done
echo "s4 after $((SECONDS-t0)) s" >> $W/progress.txt; pack
run device-suite 170 $B/test-gdn-check-device_matches_reference --include-ignored --test-threads 2
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
