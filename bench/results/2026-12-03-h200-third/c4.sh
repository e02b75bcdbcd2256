#!/usr/bin/env bash
# Session 3, call 4: the state update written out (HEAD) against the previous coop_state, then every
# device test binary (bench/h200.sh tests). Logs into $OUT.
set -u
O=${OUT:-out}; B=.dev/bin; mkdir -p $O
(cd .dev && tar xJf bin.tar.xz)
$B/gdn-check kernel-stats --kernel coop_state > $O/stats.txt 2>&1
GDN_KERNEL_DIR=.dev/v/oldstate $B/gdn-check kernel-stats --kernel coop_state >> $O/stats.txt 2>&1
C="--family chunked --repeat 5 --profile --precision tensor-core --preset qwen3-next --seq 1024"
for b in 1 8; do
  timeout 40 $B/gdn-check run $C --batch $b --reference-sequences 1 --reference-heads 1 > $O/b$b-head.txt 2>&1
  GDN_KERNEL_DIR=.dev/v/oldstate timeout 40 $B/gdn-check run $C --batch $b --reference-sequences 0 > $O/b$b-old.txt 2>&1
done
timeout 240 bash bench/h200.sh tests > $O/h200-tests-console.txt 2>&1
echo "rc=$?" >> $O/h200-tests-console.txt
