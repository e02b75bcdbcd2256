#!/usr/bin/env bash
# Session 4, call 5 (HEAD: steady-state decode timing): the device suite and the decode tests at
# HEAD (the device suite ran at dff10aa, call 3), then the decode step timed three times at 8 and 64 sequences. All into $OUT/c5.tgz.
set -u
O=${OUT:-out}; W=/tmp/c5; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
(cd .dev && tar xJf bin.tar.xz)
pack() { tar czf $O/c5.tgz -C /tmp c5; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for i in 1 2 3; do
  run decode-n8-$i 20 $B/gdn-check decode --preset qwen3-next --sequences 8 --steps 200
  run decode-n64-$i 30 $B/gdn-check decode --preset qwen3-next --sequences 64 --steps 200
done
pack
run test-decode 30 $B/test-gdn-check-decode

echo "total $((SECONDS-t0)) s" > $W/progress.txt; pack
