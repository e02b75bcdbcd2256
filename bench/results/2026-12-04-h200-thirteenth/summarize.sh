#!/usr/bin/env bash
# Summarises e3.tgz's gdn-check runs, one line each: verdict, forward, forward + backward (ms), then
# each kernel's time alone / in the pass. Usage: bash summarize.sh DIR (the unpacked e3/ folder).
set -u
dir=${1:?usage: summarize.sh DIR}
for f in "$dir"/*.txt; do
  grep -q "^device time" "$f" || continue
  awk -v name="$(basename "$f" .txt)" '
    /within their bars/ { verdict = "ok" }
    /OVER THEIR BARS/ { verdict = "FAIL" }
    /^  forward  / { fwd = $2 }
    /^  forward \+ backward/ { both = $4 }
    /^  (fwd|bwd) / { kernels = kernels sprintf(" %s %s=%s/%s", $1, $2, $3, $5) }
    END { printf "%-22s %-4s fwd %s  fwd+bwd %s |%s\n", name, verdict, fwd, both, kernels }
  ' "$f"
done
