#!/usr/bin/env bash
# Ours beside fla on the lent GPU (an H100 or an H200), run from the repository root with .dev
# carried along:
#   cargo xtask device-bundle                    # here: release binaries into .dev/bin
#   cargo xtask bench --device-bundle            # here: the release bench binary into .dev/bin
#   (cd .dev && tar cJf bin.tar.xz bin && rm -r bin)   # here: 9 MB instead of 100 (64 MiB travel)
#   bash ../shared/device/prepare.sh             # here, once: Vulkan loader and fla wheel into .dev
#   bash .dev/on-gpu.sh bash bench/side_by_side.sh PART   # there, through the device tool
# PART: tests | layer | profile | fuzz | storage | fla-s1 | fla | fla-layer | decode | bench |
# bench-ours | bench-fla. Each writes one log, PART.txt, into $OUT (default target/bench: outside
# what git tracks; never into bench/); the bench parts also write bench.jsonl (and criterion's
# reports as criterion.tgz). Back here, the figures go into bench/baselines and BENCHMARKS.md:
#   cargo xtask bench-report append --commit COMMIT --date YYYY-MM-DD OUT/bench.jsonl OUT/layer.txt …
# For a kernel variant, GDN_KERNEL_DIR=DIR (bench/kernel_overrides.sh writes a commit's kernels).
set -u
part=${1:?usage: side_by_side.sh tests|layer|profile|fuzz|storage|fla-s1|fla|fla-layer|decode|bench|bench-ours|bench-fla}
out=${OUT:-target/bench}
mkdir -p "$out"
log="$out/$part.txt"
bin=.dev/bin
[ -d "$bin" ] || [ ! -f .dev/bin.tar.xz ] || tar xJf .dev/bin.tar.xz -C .dev
# The fla shapes of the side-by-side: bf16 forward and forward + backward, f32 forward + backward,
# at S1-S4 (S4 in bf16 only).
fla_shapes=("fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 float32"
            "fwd 2 4096 16 32 bfloat16" "bwd 2 4096 16 32 bfloat16" "bwd 2 4096 16 32 float32"
            "fwd 1 8192 16 64 bfloat16" "bwd 1 8192 16 64 bfloat16" "bwd 1 8192 16 64 float32"
            "fwd 1 128 2 4 bfloat16" "bwd 1 128 2 4 bfloat16")
# Compiles (and autotunes) fla's kernels for every shape at once, one process each, on the 16
# cores; their figures are dropped. Triton compiles and autotunes per shape and dtype (a warm-up at
# one shape does not cover the others: seen 2026-12-02); f32's backward takes longest, 284 s
# (2026-12-03). The cache it leaves, 435 MB, is too big to carry from one machine to the next.
fla_compile() {
  echo "===== compiling fla's kernels for ${#fla_shapes[@]} shapes at once" | tee -a "$log"
  local start=$SECONDS
  for s in "${fla_shapes[@]}"; do timeout 330 python3 .dev/fla_bench.py $s > /dev/null 2>&1 & done
  wait
  echo "===== compiled after $((SECONDS - start)) s" | tee -a "$log"
}
# bench.jsonl: our summary and fla's figures so far ("FLA mode=fwd dtype=bfloat16 B=8 …
# graph_ms=0.466 graph_min_ms=0.450" becomes one JSON object), rewritten after every step so that a
# run cut short still brings back what it measured.
collect() {
  grep -s -E '^FLA(LAYER|_DECODE)? ' "$log" | awk '{
    kind = $1 == "FLA" ? "fla" : ($1 == "FLALAYER" ? "fla_layer" : "fla_decode")
    printf "{\"kind\":\"%s\"", kind
    for (i = 2; i <= NF; i++) {
      n = index($i, "="); if (n == 0) break
      k = substr($i, 1, n - 1); v = substr($i, n + 1)
      if (v ~ /^[0-9]+(\.[0-9]+)?$/) printf ",\"%s\":%s", k, v; else printf ",\"%s\":\"%s\"", k, v
    }
    print "}" }' > "$out/fla.jsonl"
  cat "$out/ours.jsonl" "$out/fla.jsonl" > "$out/bench.jsonl" 2>/dev/null
}
step() {
  echo "===== $*" | tee -a "$log"
  local start=$SECONDS
  "$@" >> "$log" 2>&1
  echo "===== rc=$? after $((SECONDS - start)) s" | tee -a "$log"
}
case "$part" in
  tests)
    # Every bundled device test, the tensor-core one (ignored where the adapter lacks them) included.
    step "$bin/test-gdn-check-device_matches_reference" --include-ignored --test-threads 2 --nocapture
    for t in "$bin"/test-*; do
      case "$t" in *device_matches_reference) ;; *) GDN_CHECK_BIN="$bin/gdn-check" step "$t" --nocapture ;; esac
    done
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
  storage)
    # Half storage and an engine's own buffers on the GPU (issue 12's last item): the device tests,
    # 1 000-case campaigns in bf16 and f16, and S1 with bf16 storage (the edge conversions' cost).
    step "$bin/test-gdn-check-half_storage" --nocapture
    step "$bin/test-gdn-check-engine" --nocapture
    for s in bf16 f16; do step "$bin/gdn-check" fuzz --cases 1000 --seed 21 --jobs 6 --storage $s; done
    step "$bin/gdn-check" run --preset qwen3-next --batch 8 --seq 1024 --repeat 5 --profile --storage bf16 --reference-heads 2
    ;;
  fla-s1)
    # The anchor of S1 forward + backward in f32 (Triton compiles for about two minutes first).
    step python3 .dev/fla_bench.py bwd 8 1024 16 32 float32
    ;;
  fla-layer)
    # fla's whole layer (conv, q/k norms and gates in kernel, gated RMSNorm, every gradient: the
    # same work as ours) at S4 and S1, bf16, compiled at once and then timed in turn.
    layer_shapes=("fwd 1 128 2 4 bfloat16" "bwd 1 128 2 4 bfloat16" "fwd 8 1024 16 32 bfloat16" "bwd 8 1024 16 32 bfloat16")
    for s in "${layer_shapes[@]}"; do timeout 330 python3 .dev/fla_layer.py $s > /dev/null 2>&1 & done
    wait
    for s in "${layer_shapes[@]}"; do step timeout 120 python3 .dev/fla_layer.py $s; done
    ;;
  decode)
    # The decode step at 8 and 64 sequences of qwen3-next beside fla's fused recurrent kernel.
    for n in 8 64; do
      step "$bin/gdn-check" decode --preset qwen3-next --sequences $n --steps 200
      step timeout 200 python3 bench/fla_decode.py $n
    done
    ;;
  fla)
    step python3 .dev/fla_bench.py fwd 8 1024 16 32 bfloat16
    step python3 .dev/fla_bench.py bwd 8 1024 16 32 bfloat16
    step python3 .dev/fla_bench.py bwd 8 1024 16 32 float32
    step python3 .dev/fla_bench.py bwd 2 4096 16 32 float32
    ;;
  bench|bench-ours|bench-fla)
    # Ours and fla's GPU times at the standard shapes in one run, as JSON lines in bench.jsonl:
    # about 9 minutes (ours 3, fla's compile 5, fla's timing 1), inside one ten-minute call.
    # bench-ours and bench-fla are its two halves.
    if [ "$part" != bench-fla ]; then
      # Every family of the bench: the whole layer at S1-S4, decode and the crossover sweep, and
      # the decoder's step at 8 and 64 sequences (BENCH_FILTER, a criterion regex over ids such as
      # recurrent-s1/layer/forward and decode/qwen3-next/n8, and GDN_BENCH_SHAPES change that:
      # BENCH_FILTER=-s1/ gives every kernel at S1). GPU timestamps are steady from one pass to the
      # next, so half a second of samples after the warm-up does.
      CRITERION_HOME=/tmp/criterion GDN_BENCH_SHAPES=${GDN_BENCH_SHAPES:-standard,crossover} \
        GDN_BENCH_SUMMARY="$out/ours.jsonl" \
        step timeout 280 "$bin/bench-gdn-train-layer" --bench "${BENCH_FILTER:-/layer/|^decode/}" --warm-up-time 0.3 --measurement-time 0.5
      tar czf "$out/criterion.tgz" -C /tmp criterion
      collect
    fi
    if [ "$part" != bench-ours ]; then
      # fla's chunked kernel (GPU time: graph) at every shape, timed one after the other in one
      # process once every shape has compiled.
      fla_compile
      step timeout 150 python3 bench/fla_times.py "${fla_shapes[@]}"
    fi
    collect
    echo "===== summary: $(wc -l < "$out/bench.jsonl") records in $out/bench.jsonl" | tee -a "$log"
    ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
echo "===== into the baselines, back here: cargo xtask bench-report append --commit COMMIT OUT/bench.jsonl OUT/$part.txt" | tee -a "$log"
grep -E "rc=" "$log" | grep -v "rc=0" && exit 1 || exit 0
