//! Inference's decode step (`templates/decode/`): a step of a few tokens for a batch of sequences,
//! the whole forward in one dispatch, a head's state in one workgroup's registers
//! ([`crate::LaneLayout::decode`]), the recurrent states and conv windows updated in place in a
//! pool addressed by slot.

use super::shared::CONV_WINDOW;
use super::{Binding, KernelDef, Needs, ROW_LANES_SUBGROUP, ROW_LANES_WORKGROUP, bind, wgsl};
use crate::HeadDims;
use crate::kernels::BindingKind::{Counters, LayerUniform, ReadF32, ReadU32, WriteF32, WriteVec4F32};
use crate::tiling::LaneLayout;

/// The most tokens per sequence one decode step takes (speculative decoding's drafts).
pub const MAX_DECODE_TOKENS: u32 = 8;

const DECODE_STEP_BINDINGS: &[Binding] = &[
    bind("layer", LayerUniform),
    bind("slots", ReadU32),
    bind("qkv", ReadF32),
    bind("z", ReadF32),
    bind("gate_inputs", ReadF32),
    bind("params", ReadF32),
    bind("state", WriteVec4F32),
    bind("conv_state", WriteF32),
    bind("out", WriteF32),
    bind("arrivals", Counters),
];

/// Floats of the decode step's workgroup memory: a token's conv outputs (q, k, v); by token parity
/// the RMSNorm factors, the raw o and the groups' sums of squares; the arrival flag; the portable
/// kernel's lane values (`portable` 1) or none.
fn floats(dims: HeadDims, portable: u32) -> u32 {
    let layout = LaneLayout::decode(dims);
    2 * dims.dk + dims.dv + 4 * dims.dv + 2 * layout.groups + 1 + portable * 4 * layout.threads()
}

/// The decode step's `const`s.
fn constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    let layout = LaneLayout::decode(dims);
    let mut constants = layout.constants(dims);
    constants.extend([("GROUPS", layout.groups), ("CONV_WINDOW", CONV_WINDOW)]);
    constants
}

pub(crate) const DECODE_STEP: KernelDef = KernelDef {
    name: "decode_step",
    template: wgsl!("decode/decode_step"),
    snippets: &[ROW_LANES_SUBGROUP],
    bindings: DECODE_STEP_BINDINGS,
    threads: |dims| LaneLayout::decode(dims).threads(),
    workgroup_floats: |dims| floats(dims, 0),
    constants,
    depends_on_dims: true,
    needs: Needs::WideSubgroups,
};

pub(crate) const DECODE_STEP_PORTABLE: KernelDef = KernelDef {
    name: "decode_step_portable",
    snippets: &[ROW_LANES_WORKGROUP],
    workgroup_floats: |dims| floats(dims, 1),
    needs: Needs::Nothing,
    ..DECODE_STEP
};
