#!/usr/bin/env python3
"""Tiny Qwen3-Next and Qwen3.5 checkpoints, made with transformers' own classes, and what their
first linear-attention layer computes on a fixed input: the ground truth for the Rust checkpoint
loader (gdn_train::checkpoint) and the operator, from the real model code rather than our reading
of it.

How it is run (needs torch and transformers >= 5; this repository's machines have neither, the lent
GPU machine has both; no network, no GPU needed: everything runs on the CPU in float32):

    python3 gdn-check/tests/data/make_tiny_checkpoint.py [OUT_DIR]

OUT_DIR defaults to gdn-check/tests/data/hf_tiny (the committed files were made with torch 2.11
and transformers 5.17, whose reference PyTorch paths ran: fla and causal_conv1d absent; the
generation_config.json save_pretrained also writes is not kept). For each model (qwen3_next, qwen3_5) it writes
OUT_DIR/<model>/:

- model.safetensors, config.json: `save_pretrained` of a random 2-layer model (layer 0 linear
  attention, layer 1 full attention), hidden 32, linear attention nk=2, nv=4 (rep 2), dk=dv=16,
  kk=4, rms_norm_eps 1e-6, float32 (with --dtype bfloat16: stored in bf16, run in f32 after the
  round trip). The layer's parameters are re-drawn after init so that none is a constant (dt_bias,
  norm.weight are all ones after init) and the projections give activations of order 1. A few
  hundred KB per model.
- io.safetensors: float32 tensors of layer 0's `linear_attn`, run alone (no cache, no mask) on a
  fixed input of B=2 sequences of T=7 tokens:
  - `hidden_states` [B, T, hidden]: the layer's input (seed 1234);
  - `operator_out` [B, T, nv*dv]: the input of `out_proj` (a forward pre-hook), i.e. the
    operator's `out`: conv + SiLU, L2 norms, gates, delta rule, gated RMSNorm;
  - `output` [B, T, hidden]: the layer's output, after `out_proj`;
  - the raw outputs of each input projection, by module name (`in_proj_qkvz`, `in_proj_ba` for
    Qwen3-Next, still grouped per key head; `in_proj_qkv`, `in_proj_z`, `in_proj_b`, `in_proj_a`
    for Qwen3.5), [B, T, rows].

What the Rust side compares: LayerWeights::load_beside_config(model.safetensors,
"model.layers.{i}.linear_attn.", 0), then per token qkv = W_qkv x, z = W_z x, b = W_b x,
a = W_a x with the loaded (un-grouped) projections, gdn-ref's forward with LayerWeights::params()
on them against `operator_out` (relative RMS, f64 oracle vs transformers' f32: expect ~1e-6), and
out_proj of that against `output`. For Qwen3.5 the projections can also be compared one to one with
the raw `in_proj_*` outputs; for Qwen3-Next the grouped raw outputs are the check of the
un-grouping: ungroup(in_proj_qkvz(x)) must equal loaded W_qkv x and W_z x.
"""

import argparse
import json
import os
import sys

import torch
from safetensors.torch import save_file

HIDDEN = 32
LINEAR = dict(
    linear_num_key_heads=2,
    linear_num_value_heads=4,
    linear_key_head_dim=16,
    linear_value_head_dim=16,
    linear_conv_kernel_dim=4,
)
COMMON = dict(
    vocab_size=32,
    hidden_size=HIDDEN,
    intermediate_size=16,
    num_hidden_layers=2,
    layer_types=["linear_attention", "full_attention"],
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=16,
    rms_norm_eps=1e-6,
    max_position_embeddings=64,
    tie_word_embeddings=False,
    **LINEAR,
)
B, T = 2, 7


def qwen3_next():
    from transformers import Qwen3NextConfig, Qwen3NextForCausalLM

    # Dense MLPs in both layers (mlp_only_layers) keep the file small; the MoE is not under test.
    config = Qwen3NextConfig(
        **COMMON,
        num_experts=2,
        num_experts_per_tok=1,
        moe_intermediate_size=8,
        shared_expert_intermediate_size=8,
        mlp_only_layers=[0, 1],
    )
    return Qwen3NextForCausalLM(config), ["in_proj_qkvz", "in_proj_ba"]


def qwen3_5():
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

    return Qwen3_5ForCausalLM(Qwen3_5TextConfig(**COMMON)), ["in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a"]


@torch.no_grad()
def redraw(layer, seed):
    """The spec's test distributions for the parameters; projections scaled to give O(1) activations."""
    gen = torch.Generator().manual_seed(seed)
    normal = lambda shape, std: torch.randn(shape, generator=gen) * std  # noqa: E731
    for name, module in layer.named_children():
        if name.startswith("in_proj") or name == "out_proj":
            module.weight.copy_(normal(module.weight.shape, module.weight.shape[1] ** -0.5))
    layer.conv1d.weight.copy_(normal(layer.conv1d.weight.shape, 0.5))
    layer.A_log.copy_(torch.rand(layer.A_log.shape, generator=gen) * 3.5 - 1.0)
    layer.dt_bias.copy_(normal(layer.dt_bias.shape, 0.5))
    layer.norm.weight.copy_(1.0 + normal(layer.norm.weight.shape, 0.3))


def make(name, build, out_dir, dtype):
    torch.manual_seed(0)
    model, projections = build()
    model = model.to(torch.float32).eval()
    layer = model.model.layers[0].linear_attn
    redraw(layer, seed=7)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    model.to(dtype).save_pretrained(folder, safe_serialization=True)
    model = model.to(torch.float32)  # bf16 round trip: the saved values, run in f32

    captured = {}
    hooks = [layer.out_proj.register_forward_pre_hook(lambda m, args: captured.__setitem__("operator_out", args[0]))]
    for proj in projections:
        hooks.append(
            getattr(layer, proj).register_forward_hook(lambda m, args, out, p=proj: captured.__setitem__(p, out))
        )
    x = torch.randn(B, T, HIDDEN, generator=torch.Generator().manual_seed(1234))
    with torch.no_grad():
        output = layer(x)
    for h in hooks:
        h.remove()
    tensors = {"hidden_states": x, "output": output, **captured}
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in tensors.items()}
    save_file(tensors, os.path.join(folder, "io.safetensors"))
    sizes = {k: os.path.getsize(os.path.join(folder, k)) for k in sorted(os.listdir(folder))}
    print(name, json.dumps({k: list(v.shape) for k, v in tensors.items()}), sizes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("out_dir", nargs="?", default=os.path.join(here, "hf_tiny"))
    parser.add_argument("--dtype", choices=["float32", "bfloat16", "float16"], default="float32")
    args = parser.parse_args()
    import transformers

    print("torch", torch.__version__, "transformers", transformers.__version__)
    failed = []
    for name, build in [("qwen3_next", qwen3_next), ("qwen3_5", qwen3_5)]:
        try:
            make(name, build, args.out_dir, getattr(torch, args.dtype))
        except ImportError as e:  # an older transformers without Qwen3.5
            print(f"{name}: skipped, {e}", file=sys.stderr)
            failed.append(name)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
