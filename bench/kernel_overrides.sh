#!/usr/bin/env bash
# Writes the generated WGSL of COMMIT's kernels into DIR, named as GDN_KERNEL_DIR reads them
# ({kernel}-{dk}x{dv}-{precision}.wgsl), so that a run of another build times COMMIT's kernels
# (GDN_KERNEL_DIR=DIR gdn-check run …) without rebuilding; edit a file there to time a variant.
# Kernel copies are never committed: make them again from the commit.
#   bash bench/kernel_overrides.sh COMMIT DIR [KERNEL…]       (default: every kernel)
# DK=128 DV=128 (the default) picks the head dims; DK=all every supported pair, where COMMIT has
# gdn-wgsl's dump_variants example (from 236725a on). Older commits go through `cargo xtask wgsl`,
# which does not print the precision: their files are named -f32 unless PRECISION=tensor-core.
set -euo pipefail
commit=${1:?usage: kernel_overrides.sh COMMIT DIR [KERNEL...]}
dir=${2:?usage: kernel_overrides.sh COMMIT DIR [KERNEL...]}
shift 2
dk=${DK:-128}
dv=${DV:-$dk}
root=$(git rev-parse --show-toplevel)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tree=$(mktemp -d /tmp/kernel-overrides-XXXXXX)
trap 'git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
git -C "$root" worktree add --detach "$tree" "$commit" >/dev/null
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/kernel-overrides-target}
cd "$tree"
if [ -f gdn-wgsl/examples/dump_variants.rs ]; then
  all=$(mktemp -d)
  cargo run -q -p gdn-wgsl --example dump_variants -- "$all" >/dev/null
  for f in "$all"/*.wgsl; do
    name=$(basename "$f")
    kernel=${name%%-*}
    dims=${name#*-}; dims=${dims%%-*}
    [ "$dk" = all ] || [ "$dims" = "${dk}x${dv}" ] || continue
    if [ $# -gt 0 ]; then
      keep=0; for k in "$@"; do [ "$k" = "$kernel" ] && keep=1; done
      [ $keep = 1 ] || continue
    fi
    cp "$f" "$dir/$name"
  done
  rm -r "$all"
else
  [ "$dk" != all ] || { echo "DK=all needs dump_variants (from 236725a on)" >&2; exit 2; }
  kernels=("$@")
  if [ ${#kernels[@]} = 0 ]; then
    mapfile -t kernels < <(cargo run -q -p xtask -- wgsl --dk "$dk" --dv "$dv" | sed -n 's|^// ===== \([a-z0-9_]*\) for .*|\1|p')
  fi
  for k in "${kernels[@]}"; do
    cargo run -q -p xtask -- wgsl --dk "$dk" --dv "$dv" --kernel "$k" | tail -n +2 \
      > "$dir/$k-${dk}x${dv}-${PRECISION:-f32}.wgsl"
  done
fi
echo "$(ls "$dir" | wc -l) kernels of $commit in $dir: GDN_KERNEL_DIR=$dir"
