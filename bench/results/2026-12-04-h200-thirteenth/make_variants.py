#!/usr/bin/env python3
"""Writes .dev/variants/NAME/KERNEL-128x128-f32.wgsl: timing-only edits of the working tree's
generated few-head recurrences (results wrong by design), for e3.sh's GDN_KERNEL_DIR runs (.dev
travels to the device). Run from the repository root before a call; an edit that no longer matches
the kernel stops it.
  fnosum   the forward's sums over lanes (chunk_row_sum, token_scatter_sum) return their input
  fnostage the forward's stage loads after the first
  fnostore the forward's o and r stores (still computed: stored only for an impossible value)
  bnosum   the backward's sums over lanes, as fnosum
  bnobar   the backward's two barriers a chunk and its partial sums
  bnorep   the backward's replay
"""
import os
import subprocess


def generated(kernel):
    out = subprocess.run(["cargo", "run", "-q", "-p", "xtask", "--", "wgsl", "--dk", "128", "--dv", "128",
                          "--kernel", kernel], check=True, capture_output=True, text=True).stdout
    return out.split("\n", 1)[1]


def edit(text, old, new):
    if old not in text:
        raise SystemExit(f"make_variants: no longer in the kernel:\n{old}")
    return text.replace(old, new)


def no_sums(text):
    text = edit(text, """    var total = x;
    for (var offset = 16u; offset > 0u; offset = offset / 2u) {
        total = total + subgroupShuffleXor(total, offset);
    }
    return total;""", "    return x;")
    return edit(text, "fn token_scatter_sum(tid: u32, x: vec4<f32>) -> f32 {\n",
                "fn token_scatter_sum(tid: u32, x: vec4<f32>) -> f32 {\n    return x.x;\n")


def no_barriers(text):
    start = text.index("            workgroupBarrier();\n\n            // The block's partials")
    end = text.index("            workgroupBarrier();\n        }\n    }\n", start)
    return text[:start] + text[end + len("            workgroupBarrier();\n"):]


forward = generated("recurrence_forward_chunks")
backward = generated("recurrence_backward_columns")
no_store = edit(forward, "if (columns && token >= lo && token < hi && rl % 8u == 0u) {",
                "if (columns && token >= lo && token < hi && rl % 8u == 0u && out == 1.2345e-30) {")
no_store = edit(no_store, "if (columns && rl >= lo && rl < hi && r_at < arrayLength(&ckpt)) {",
                "if (columns && rl >= lo && rl < hi && r_at < arrayLength(&ckpt) && r0 == 1.2345e-30) {")
variants = {
    "fnosum": ("recurrence_forward_chunks", no_sums(forward)),
    "fnostage": ("recurrence_forward_chunks",
                 edit(forward, "        stage = load_stage(first + STAGE, end, h, key, col0, tid);\n", "")),
    "fnostore": ("recurrence_forward_chunks", no_store),
    "bnosum": ("recurrence_backward_columns", no_sums(backward)),
    "bnobar": ("recurrence_backward_columns", no_barriers(backward)),
    "bnorep": ("recurrence_backward_columns",
               edit(backward, "        if (!every_chunk) {\n", "        if (false) {\n")),
}
for name, (kernel, text) in variants.items():
    folder = os.path.join(".dev", "variants", name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{kernel}-128x128-f32.wgsl"), "w") as f:
        f.write(f"// timing-only variant '{name}' of {kernel}: results wrong by design\n" + text)
    print(os.path.join(folder, f"{kernel}-128x128-f32.wgsl"))
