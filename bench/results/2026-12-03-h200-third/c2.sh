#!/usr/bin/env bash
# Session 3, call 2: variants of coop_state (B=1: one workgroup per SM), coop_prepare and conv_forward, with driver stats.
set -u
O=${OUT:-out}; W=/tmp/c2; mkdir -p $O $W; B=.dev/bin; t0=$SECONDS
pack() { tar czf $O/c2.tgz -C /tmp c2; }
run() { name=$1; t=$2; shift 2; s=$SECONDS; timeout $t "$@" > $W/$name.txt 2>&1; echo "rc=$? $((SECONDS-s)) s" >> $W/$name.txt; }
for d in .dev/v/*/; do v=$(basename $d); GDN_KERNEL_DIR=$d run stats-$v 30 $B/gdn-check kernel-stats --kernel co; done
run stats-head 30 $B/gdn-check kernel-stats --kernel co
pack
C="--family chunked --repeat 5 --profile --precision tensor-core --reference-sequences 0 --preset qwen3-next --seq 1024"
run b1-head 30 $B/gdn-check run $C --batch 1
for v in old s_nosb s_noS s_noU s_nokeep s_nostage s_norec h_nopre; do GDN_KERNEL_DIR=.dev/v/$v run b1-$v 30 $B/gdn-check run $C --batch 1; done
pack
run b8-head 40 $B/gdn-check run $C --batch 8
for v in old p_solve p_nosolve h_nopre c_vec; do GDN_KERNEL_DIR=.dev/v/$v run b8-$v 40 $B/gdn-check run $C --batch 8; done
echo "total $((SECONDS-t0)) s" >> $W/progress.txt; pack
