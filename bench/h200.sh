#!/usr/bin/env bash
# Runs on the lent H200 from the repository root, with .dev carried along:
#   cargo xtask device-bundle                    # here: release binaries into .dev/bin
#   bash ../shared/device/prepare.sh             # here, once: Vulkan loader and fla wheel into .dev
#   bash .dev/on-gpu.sh bash bench/h200.sh PART  # there, through the device tool
# PART: tests | layer | profile | fuzz | fla-s1 | fla. Each writes one log into $OUT (or ./h200-out).
set -u
part=${1:?usage: h200.sh tests|layer|profile|fuzz|fla-s1|fla}
out=${OUT:-h200-out}
mkdir -p "$out"
log="$out/$part.txt"
bin=.dev/bin
step() {
  echo "===== $*" | tee -a "$log"
  local start=$SECONDS
  "$@" >> "$log" 2>&1
  echo "===== rc=$? after $((SECONDS - start)) s" | tee -a "$log"
}
case "$part" in
  tests)
    step "$bin/test-gdn-check-device_matches_reference" --test-threads 1 --nocapture
    step "$bin/test-gdn-train-errors"
    step "$bin/test-gdn-check-fuzz" --nocapture
    ;;
  layer)
    # The anchors' shapes (dk = dv = 128, kk = 4): S4 small, S1 and S2 at Qwen3-Next's heads.
    step "$bin/gdn-check" run --preset qwen3-next --nk 2 --nv 4 --batch 1 --seq 128 --repeat 20
    step "$bin/gdn-check" run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile
    step "$bin/gdn-check" run --preset qwen3-next --batch 2 --seq 4096 --repeat 5
    ;;
  profile)
    # Per-kernel times at S1, with naga's bounds checks on (the default) and off.
    step "$bin/gdn-check" run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile
    GDN_BOUNDS_CHECKS=0 step "$bin/gdn-check" run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile
    ;;
  fuzz)
    step "$bin/gdn-check" fuzz --cases 1000 --seed 7
    ;;
  fla-s1)
    # The anchor of S1 forward + backward in f32 (Triton compiles for about two minutes first).
    step python3 .dev/fla_bench.py bwd 8 1024 16 32 float32
    ;;
  fla)
    step python3 .dev/fla_bench.py fwd
    step python3 .dev/fla_bench.py bwd 8 1024 16 32 bfloat16
    step python3 .dev/fla_bench.py bwd 8 1024 16 32 float32
    step python3 .dev/fla_bench.py bwd 2 4096 16 32 float32
    ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
grep -E "rc=" "$log" | grep -v "rc=0" && exit 1 || exit 0
