#!/usr/bin/env bash
# Runs a command on Mesa 26's lavapipe, whose cooperative matrices run the tensor-core kernels on a
# CPU (bookworm's Mesa 22 has none): `bash dev/lavapipe-coop.sh ./target/release/gdn-check run
# --precision tensor-core --family chunked --nk 1 --nv 2 --dk 64 --dv 64 --seq 70`, or a device test
# binary with `--ignored tensor_core`. The first run unpacks trixie's Mesa and the libraries it needs
# (with trixie's glibc, whose loader then runs the command) into $GDN_LAVAPIPE_COOP (default
# /opt/lavapipe-coop); nothing is installed system-wide. Lavapipe advertises 8 × 8 × 8 cooperative
# matrices only, so the command runs with GDN_TENSOR_CORES_UNADVERTISED=1. Times are a CPU's.
set -euo pipefail
prefix=${GDN_LAVAPIPE_COOP:-/opt/lavapipe-coop}
lib=$prefix/usr/lib/x86_64-linux-gnu
if [ ! -e "$prefix/lvp.json" ]; then
  work=$(mktemp -d)
  mkdir -p "$work/lists/partial" "$work/debs" "$prefix"
  cat > "$work/sources.list" <<LIST
deb http://deb.debian.org/debian trixie main
deb http://deb.debian.org/debian trixie-backports main
LIST
  o="-oDir::Etc::SourceList=$work/sources.list -oDir::Etc::SourceParts=/dev/null -oDir::State::Lists=$work/lists"
  o="$o -oAPT::Architecture=amd64 -oAPT::Architectures=amd64"
  apt-get -qq $o update
  (cd "$work/debs" && apt-get -qq $o download mesa-vulkan-drivers/trixie-backports \
    libc6/trixie libvulkan1/trixie libdisplay-info2/trixie libdrm-amdgpu1/trixie libdrm2/trixie \
    libelf1t64/trixie libexpat1/trixie libgcc-s1/trixie libllvm19/trixie libpng16-16t64/trixie \
    libstdc++6/trixie libwayland-client0/trixie libx11-xcb1/trixie libxcb-dri3-0/trixie \
    libxcb-present0/trixie libxcb-randr0/trixie libxcb-shm0/trixie libxcb-sync1/trixie \
    libxcb-xfixes0/trixie libxcb1/trixie libxshmfence1/trixie libzstd1/trixie zlib1g/trixie \
    libffi8/trixie libedit2/trixie libz3-4/trixie libxml2/trixie libtinfo6/trixie libbsd0/trixie \
    libmd0/trixie libx11-6/trixie libxau6/trixie libxdmcp6/trixie libicu76/trixie liblzma5/trixie \
    hwdata/trixie) 2>&1 | grep -v unsandboxed || true
  for f in "$work"/debs/*.deb; do dpkg -x "$f" "$prefix"; done
  sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$lib/libvulkan_lvp.so\"#" \
    "$prefix/usr/share/vulkan/icd.d/lvp_icd.json" > "$prefix/lvp.json"
  rm -rf "$work"
fi
export VK_ICD_FILENAMES=$prefix/lvp.json XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export GDN_TENSOR_CORES_UNADVERTISED=1
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib:$prefix/lib/x86_64-linux-gnu" "$@"
